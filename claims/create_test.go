package claims

import (
	"context"
	"errors"
	"math/rand"
	"net/url"
	"strings"
	"testing"
)

// onePick always offers the same candidate.
type onePick struct{ picks int }

func (p *onePick) Pick(context.Context, url.Values, *rand.Rand) (*Pick, string, error) {
	p.picks++
	return &Pick{Root: "cn1", Allocs: map[string]ProviderAllocation{"rp1": {Resources: map[string]int64{"VCPU": 1}}}}, "", nil
}

// refusing answers every write with err.
type refusing struct {
	err  error
	puts int
}

func (p *refusing) ConsumerAllocations(context.Context, []string) (map[string]*Allocations, error) {
	return nil, nil
}

func (p *refusing) PutAllocations(_ context.Context, ws []Write) (int, error) {
	p.puts++
	return 0, p.err
}

// TestCreateStopsAtInvalid: a claim Placement refuses as a bad request is
// invalid input at the first attempt (it used to be sent ten times and
// reported as "taken by a concurrent claim"); a claim refused for room is
// tried again; invalid ids and uuids are refused before any request.
func TestCreateStopsAtInvalid(t *testing.T) {
	ctx := context.Background()
	req := CreateRequest{Consumer: "aaaaaaaa00004000800000000000ABCE", Project: "p", User: "u", Resources: map[string]int64{"VCPU": 1}}
	pl, pk := &refusing{err: &WriteError{Invalid: true, Detail: "JSON does not validate"}}, &onePick{}
	_, err := (&Creator{Placement: pl, Picker: pk, Attempts: 10}).Create(ctx, req)
	if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "JSON does not validate") || pl.puts != 1 {
		t.Errorf("bad request: err %v after %d writes, want ErrBadInput after 1", err, pl.puts)
	}
	pl, pk = &refusing{err: &WriteError{Detail: "would exceed the capacity"}}, &onePick{}
	_, err = (&Creator{Placement: pl, Picker: pk, Attempts: 3}).Create(ctx, req)
	var re *RefusedError
	if !errors.As(err, &re) || pl.puts != 3 {
		t.Errorf("no room: err %v after %d writes, want a refusal after 3", err, pl.puts)
	}
	for _, bad := range []CreateRequest{
		{Consumer: "nope", Project: "p", User: "u", Resources: req.Resources},
		{Consumer: req.Consumer, Project: strings.Repeat("p", 300), User: "u", Resources: req.Resources},
		{Consumer: req.Consumer, Project: "p", User: "", Resources: req.Resources},
	} {
		pl, pk = &refusing{}, &onePick{}
		if _, err := (&Creator{Placement: pl, Picker: pk}).Create(ctx, bad); !errors.Is(err, ErrBadInput) || pl.puts+pk.picks != 0 {
			t.Errorf("%.40q: err %v after %d picks and %d writes, want ErrBadInput before any", bad.Consumer+"/"+bad.Project+"/"+bad.User, err, pk.picks, pl.puts)
		}
	}
}
