package candidates

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rpctl/rpctl/candidates"
	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/cmd/internal/shared"
	"github.com/rpctl/rpctl/internal/output"
	"github.com/rpctl/rpctl/internal/sanitize"
	"github.com/rpctl/rpctl/inventory"
	"github.com/rpctl/rpctl/placementclient"
)

const apiHelp = `

Through the API: given only Placement API credentials (--os-cloud, or --os-endpoint and
--os-token) and no Placement database, rpctl sends the query to the live Placement's
GET /allocation_candidates (at --microversion, or --os-placement-api-version when
--microversion is not given) and prints what osc-placement's 'allocation candidate list'
prints, in every format: the columns #, allocation, resource provider, inventory
used/capacity and (from 1.17) traits, one row per provider of each allocation request, in
Placement's order. --explain, --randomize, --seed, --max-candidates, --strategy and
--max-steps work on the built-in core's model, which is loaded from the Placement database:
through the API they are refused (exit 2), naming the database flags.`

// apiOnly tells whether candidates answers through the live API: API
// credentials and no Placement database to load the model from.
func apiOnly(f *cmdutil.Factory) bool {
	return f.UsePlacementAPI() && f.Embedded == "" && f.PlacementDB == "" && len(f.ConfigFiles) == 0
}

// runCandidatesAPI asks the live Placement and prints osc's rows.
func runCandidatesAPI(c *cobra.Command, f *cmdutil.Factory, o *CandidatesOptions, mv candidates.Microversion) error {
	for _, flag := range []string{"explain", "randomize", "seed", "max-candidates", "strategy", "max-steps"} {
		if c.Flags().Changed(flag) {
			return cmdutil.UsageError("--%s needs the built-in core's model, which rpctl loads from the Placement database: give --placement-db URL, --db FILE or --config-file (through the API rpctl only asks Placement's GET /allocation_candidates)", flag)
		}
	}
	if !c.Flags().Changed("microversion") && o.Flavor == "" && f.API.Microversion != "" && f.API.Microversion != "latest" {
		v, err := candidates.ParseMicroversion(f.API.Microversion)
		if err != nil {
			return placementError(f, err, 0)
		}
		mv = v
	}
	ctx := c.Context()
	client, err := f.PlacementClient(ctx)
	if err != nil {
		return err
	}
	raw, err := ComposeCandidatesQuery(o, func(s string) (string, error) {
		if candidates.UUIDLike(s) {
			return s, nil
		}
		var uuid string
		err := shared.WithStore(c, f, func(ctx context.Context, st inventory.Store) error {
			p, err := inventory.Resolve(ctx, st, s)
			uuid = p.UUID
			return err
		})
		return uuid, err
	})
	if err != nil {
		var ee *cmdutil.ExitError
		if errors.As(err, &ee) {
			return err
		}
		return cmdutil.UsageError("%v", err)
	}
	if f.IO.Verbose {
		fmt.Fprintf(f.IO.ErrOut, "GET %s/allocation_candidates?%s at 1.%d\n", client.Endpoint(), sanitize.String(raw), int(mv))
	}
	_, body, err := client.AllocationCandidatesAt(ctx, placementclient.Version{Major: 1, Minor: int(mv)}, raw)
	if err != nil {
		var pe *placementclient.Error
		if errors.As(err, &pe) && pe.Status >= 400 && pe.Status < 500 {
			return &cmdutil.ExitError{Code: cmdutil.ExitFailed, Err: fmt.Errorf("invalid request, Placement answered %d: %s", pe.Status, pe.Message)}
		}
		return err
	}
	rows, err := OSCCandidateRows(body, mv)
	if err != nil {
		return fmt.Errorf("GET /allocation_candidates: %w", err)
	}
	return f.Write(rows, nil)
}

// OSCCandidateRows are osc-placement's allocation candidate list rows for
// a Placement answer at microversion mv (ListAllocationCandidate.take_action
// in osc_placement/resources/allocation_candidate.py): per allocation
// request (numbered from 1) one row per provider with its classes as
// CLASS=N, the provider's summary as CLASS=used/capacity and, from 1.17,
// its traits — every list in the order of Placement's JSON objects, as
// Python's json keeps it.
func OSCCandidateRows(body []byte, mv candidates.Microversion) (output.Rows, error) {
	headers := []string{"#", "allocation", "resource provider", "inventory used/capacity"}
	traits := mv >= 17
	if traits {
		headers = append(headers, "traits")
	}
	rows := output.Rows{Headers: headers, Verbatim: true}
	var resp struct {
		Requests  []json.RawMessage `json:"allocation_requests"`
		Summaries json.RawMessage   `json:"provider_summaries"`
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		return rows, err
	}
	type summary struct {
		Resources json.RawMessage `json:"resources"`
		Traits    []string        `json:"traits"`
	}
	usedCap := map[string]string{}
	rpTraits := map[string]string{}
	err := eachMember(resp.Summaries, func(rp string, v json.RawMessage) error {
		var s summary
		if err := json.Unmarshal(v, &s); err != nil {
			return err
		}
		var parts []string
		err := eachMember(s.Resources, func(rc string, v json.RawMessage) error {
			var uc struct{ Used, Capacity json.Number }
			if err := json.Unmarshal(v, &uc); err != nil {
				return err
			}
			parts = append(parts, fmt.Sprintf("%s=%s/%s", rc, uc.Used, uc.Capacity))
			return nil
		})
		usedCap[rp], rpTraits[rp] = strings.Join(parts, ","), strings.Join(s.Traits, ",")
		return err
	})
	if err != nil {
		return rows, err
	}
	amounts := func(res json.RawMessage) (string, error) {
		var parts []string
		err := eachMember(res, func(rc string, v json.RawMessage) error {
			parts = append(parts, rc+"="+string(bytes.TrimSpace(v)))
			return nil
		})
		return strings.Join(parts, ","), err
	}
	add := func(i int, rp string, res json.RawMessage) error {
		alloc, err := amounts(res)
		if err != nil {
			return err
		}
		cells := []any{i + 1, alloc, rp, usedCap[rp]}
		if traits {
			cells = append(cells, rpTraits[rp])
		}
		rows.Add(cells...)
		return nil
	}
	for i, r := range resp.Requests {
		var ar struct {
			Allocations json.RawMessage `json:"allocations"`
		}
		if err := json.Unmarshal(r, &ar); err != nil {
			return rows, err
		}
		if mv >= 12 {
			err = eachMember(ar.Allocations, func(rp string, v json.RawMessage) error {
				var a struct {
					Resources json.RawMessage `json:"resources"`
				}
				if err := json.Unmarshal(v, &a); err != nil {
					return err
				}
				return add(i, rp, a.Resources)
			})
		} else {
			var list []struct {
				Provider struct {
					UUID string `json:"uuid"`
				} `json:"resource_provider"`
				Resources json.RawMessage `json:"resources"`
			}
			if err = json.Unmarshal(ar.Allocations, &list); err == nil {
				for _, a := range list {
					if err = add(i, a.Provider.UUID, a.Resources); err != nil {
						break
					}
				}
			}
		}
		if err != nil {
			return rows, err
		}
	}
	return rows, nil
}

// eachMember calls fn for every member of a JSON object in the order
// written (Go's maps would lose it; Python's json keeps it, and osc prints
// it).
func eachMember(obj json.RawMessage, fn func(key string, v json.RawMessage) error) error {
	if len(bytes.TrimSpace(obj)) == 0 || string(bytes.TrimSpace(obj)) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(obj))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return fmt.Errorf("not a JSON object: %.40s", obj)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return err
		}
		if err := fn(tok.(string), v); err != nil {
			return err
		}
	}
	return nil
}
