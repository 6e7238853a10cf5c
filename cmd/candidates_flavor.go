package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"github.com/rpctl/rpctl/flavors"
	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/internal/output"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/apidb"
)

// FlavorOptions name a flavor (and image) whose Placement request a command
// works with, as Nova's scheduler would build it.
type FlavorOptions struct {
	Flavor         string
	Image          string
	ImageProps     []string
	BootFromVolume bool
	// ImageMetadataPrefilter and ImageTypeSupport mirror the [scheduler]
	// options of the same names.
	ImageMetadataPrefilter bool
	ImageTypeSupport       bool
}

func addImageFlags(fl *pflag.FlagSet, o *FlavorOptions) {
	fl.StringVar(&o.Image, "image", "", "an image as `openstack image show -f json` prints it (its properties and disk_format count)")
	fl.StringArrayVar(&o.ImageProps, "image-property", nil, "an image property KEY=VALUE, e.g. hw_cpu_policy=dedicated or trait:HW_CPU_X86_AVX2=required (repeatable)")
	fl.BoolVar(&o.BootFromVolume, "boot-from-volume", false, "the server boots from a volume: root_gb is not asked of DISK_GB")
	fl.BoolVar(&o.ImageMetadataPrefilter, "image-metadata-prefilter", false, "as [scheduler]image_metadata_prefilter: image properties become required root traits")
	fl.BoolVar(&o.ImageTypeSupport, "image-type-support", false, "as [scheduler]query_placement_for_image_type_support: require COMPUTE_IMAGE_TYPE_<disk_format>")
}

// loadFlavorArg reads a flavor: a file path (JSON or YAML) when one exists,
// else a name or flavorid in the API database.
func loadFlavorArg(ctx context.Context, f *Factory, arg string) (*nova.Flavor, *flavors.Image, error) {
	if st, err := os.Stat(arg); err == nil && !st.IsDir() {
		fl, img, err := flavors.ParseFile(arg)
		if err != nil {
			return nil, nil, usageError("--flavor %v", err)
		}
		return fl, img, nil
	}
	dbs, err := f.Databases(ctx, storage.NeedAPI, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("--flavor %q is not a file, and looking it up by name needs the API database: %w", arg, err)
	}
	defer dbs.Close()
	list, err := apidb.ListFlavors(ctx, dbs.API, arg)
	if err != nil {
		return nil, nil, err
	}
	if len(list) == 0 {
		return nil, nil, usageError("--flavor %q: no such file, and no flavor of that name or id in the %s", arg, dbs.API.Label())
	}
	return &list[0], nil, nil
}

// image combines --image and --image-property with the flavor file's image.
func (o *FlavorOptions) image(fromFile *flavors.Image) (*flavors.Image, error) {
	img := fromFile
	if o.Image != "" {
		i, err := flavors.ParseImageFile(o.Image)
		if err != nil {
			return nil, usageError("--image %v", err)
		}
		img = i
	}
	for _, kv := range o.ImageProps {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, usageError("--image-property %q: want KEY=VALUE", kv)
		}
		if img == nil {
			img = &flavors.Image{}
		}
		img.SetProperty(k, v)
	}
	return img, nil
}

func (o *FlavorOptions) options(limit int) flavors.Options {
	return flavors.Options{Limit: limit, BootFromVolume: o.BootFromVolume,
		ImageMetadataPrefilter: o.ImageMetadataPrefilter, ImageTypeSupport: o.ImageTypeSupport}
}

// buildFlavorRequest turns one flavor into Nova's request; a flavor Nova
// refuses is invalid input (exit 2) with Nova's message.
func buildFlavorRequest(f *Factory, fl *nova.Flavor, img *flavors.Image, opt flavors.Options) (*flavors.Request, error) {
	r, err := flavors.Build(fl, img, opt)
	var ne *flavors.NovaError
	if errors.As(err, &ne) {
		return nil, usageError("flavor %s: Nova refuses it (%s): %s", fl.Name, ne.Exception, ne.Message)
	}
	if err != nil {
		return nil, err
	}
	for _, w := range r.Warnings {
		fmt.Fprintf(f.IO.ErrOut, "flavor %s: Nova ignores an extra spec: %s\n", fl.Name, w)
	}
	return r, nil
}

// flavorQuery resolves --flavor into the query string Nova would send and,
// with --show-request, prints it and reports done.
func flavorQuery(ctx context.Context, f *Factory, o *CandidatesOptions) (query string, done bool, err error) {
	fl, fileImg, err := loadFlavorArg(ctx, f, o.Flavor)
	if err != nil {
		return "", false, err
	}
	img, err := o.FlavorOptions.image(fileImg)
	if err != nil {
		return "", false, err
	}
	limit := flavors.DefaultLimit
	if o.LimitSet {
		// --limit replaces [scheduler]max_placement_results, not a second
		// limit parameter.
		limit, o.LimitSet = o.Limit, false
	}
	opt := o.FlavorOptions.options(limit)
	r, err := buildFlavorRequest(f, fl, img, opt)
	if err != nil {
		return "", false, err
	}
	if !o.ShowRequest {
		if r.CPUPinningRequested {
			fmt.Fprintf(f.IO.ErrOut, "flavor %s asks for pinned CPUs (PCPU): Nova also asks, for hosts not yet reporting PCPU, the same with VCPU (see --show-request); this answer is the PCPU query's\n", fl.Name)
		}
		return r.QueryString(), false, nil
	}
	var fallback *flavors.Request
	if r.CPUPinningRequested {
		opt.NoPinningTranslate = true
		if fallback, err = buildFlavorRequest(f, fl, img, opt); err != nil {
			return "", false, err
		}
	}
	return "", true, writeShowRequest(f, fl, r, fallback)
}

type showRequestJSON struct {
	Flavor        string           `json:"flavor"`
	Query         string           `json:"query"`
	Request       *flavors.Request `json:"request"`
	FallbackQuery string           `json:"fallback_query,omitempty"`
}

// writeShowRequest prints the request group by group and, last, the query
// string to_querystring() gives (with -f json: one object).
func writeShowRequest(f *Factory, fl *nova.Flavor, r, fallback *flavors.Request) error {
	out := f.IO.Out
	if f.Format == output.JSON {
		v := showRequestJSON{Flavor: fl.Name, Query: r.QueryString(), Request: r}
		if fallback != nil {
			v.FallbackQuery = fallback.QueryString()
		}
		enc := json.NewEncoder(out)
		enc.SetEscapeHTML(false) // the query's "&" stays readable
		return enc.Encode(v)
	}
	fmt.Fprintf(out, "flavor %s: %d vCPU, %d MB RAM, %d GB root, %d GB ephemeral, %d MB swap\n",
		fl.Name, fl.VCPUs, fl.MemoryMB, fl.RootGB, fl.EphemeralGB, fl.Swap)
	for _, g := range r.Groups {
		line := fmt.Sprintf("  group %s: %s", groupName(g.Suffix), strings.Join(sortedAmounts(g.Resources), ", "))
		if len(g.Required) > 0 {
			line += "; required " + strings.Join(g.Required, ",")
		}
		if len(g.Forbidden) > 0 {
			line += "; forbidden " + strings.Join(g.Forbidden, ",")
		}
		fmt.Fprintln(out, line)
	}
	if r.GroupPolicy != "" {
		fmt.Fprintf(out, "  group_policy: %s\n", r.GroupPolicy)
	}
	var root []string
	root = append(root, r.RootRequired...)
	for _, t := range r.RootForbidden {
		root = append(root, "!"+t)
	}
	if len(root) > 0 {
		fmt.Fprintf(out, "  root_required: %s\n", strings.Join(root, ","))
	}
	if fallback != nil {
		fmt.Fprintf(out, "  pinned CPUs: Nova also asks, for hosts not yet reporting PCPU: %s\n", fallback.QueryString())
	}
	_, err := fmt.Fprintln(out, r.QueryString())
	return err
}

func sortedAmounts(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = fmt.Sprintf("%s=%d", k, m[k])
	}
	return out
}
