package chart

import (
	"bytes"
	"flag"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/rpctl/rpctl/capacity"
)

var update = flag.Bool("update", false, "rewrite the golden images")

// bigResult is 20 flavors (counts from tens to tens of thousands) over 8
// aggregates whose UUIDs share their first 24 characters, some named.
func bigResult(mode capacity.Mode) (res, empty *capacity.Result) {
	res = &capacity.Result{Mode: mode}
	empty = &capacity.Result{Mode: mode}
	for i := range 20 {
		res.Flavors = append(res.Flavors, fmt.Sprintf("flavor.%s-%d", []string{"tiny", "small", "medium", "large", "xxlarge"}[i%5], i))
	}
	counts := func(seed int64) (now, all []int64) {
		for i := range 20 {
			e := (9135 * (seed + 1)) / int64(1+i*i)
			all = append(all, e)
			now = append(now, e*int64(20+(i*37+int(seed)*11)%80)/100)
		}
		return now, all
	}
	names := []string{"rack-a", "", "gpu-nodes", "", "a-rather-long-aggregate-name-that-does-not-fit-in-a-panel-title", "", "edge", ""}
	for a := range 8 {
		u := fmt.Sprintf("00000000-0000-4000-9000-%012d", a)
		now, all := counts(int64(a))
		res.Aggregates = append(res.Aggregates, capacity.Aggregate{UUID: u, Name: names[a], Hosts: 10 + a, Free: now})
		empty.Aggregates = append(empty.Aggregates, capacity.Aggregate{UUID: u, Name: names[a], Hosts: 10 + a, Free: all})
	}
	res.Total, empty.Total = counts(20)
	res.Total[19], empty.Total[19] = 0, 0 // fits nowhere
	res.Hosts = make([]capacity.Host, 108)
	return res, empty
}

// checkLayout asserts what a reader needs: no two labels overlap, no label
// covers a bar, everything lies on the canvas and in its panel, and every
// panel title is different.
func checkLayout(t *testing.T, c *Chart) {
	t.Helper()
	canvas := Box{0, 0, c.Width, c.Height}
	for i, a := range c.Texts {
		if !a.Box.Inside(canvas) {
			t.Errorf("label %q %v is off the canvas %v", a.S, a.Box, canvas)
		}
		for _, b := range c.Texts[i+1:] {
			if a.Box.Intersects(b.Box) {
				t.Errorf("labels %q %v and %q %v overlap", a.S, a.Box, b.S, b.Box)
			}
		}
		for _, b := range c.Bars {
			if a.Box.Intersects(b.Box) {
				t.Errorf("label %q %v covers a bar %v", a.S, a.Box, b.Box)
			}
		}
		in := i == 0 // the chart's heading
		for _, p := range c.Panels {
			in = in || a.Box.Inside(p.Box)
		}
		if !in {
			t.Errorf("label %q %v lies in no panel", a.S, a.Box)
		}
	}
	titles := map[string]bool{}
	for i, p := range c.Panels {
		if titles[p.Title] {
			t.Errorf("two panels titled %q", p.Title)
		}
		titles[p.Title] = true
		for _, q := range c.Panels[i+1:] {
			if p.Box.Intersects(q.Box) {
				t.Errorf("panels %q and %q overlap", p.Title, q.Title)
			}
		}
		if p.Color == c.Panels[0].Color && i > 0 {
			t.Errorf("panel %q has the all-hosts colour", p.Title)
		}
	}
}

func TestLayoutNoOverlap(t *testing.T) {
	for _, mode := range []capacity.Mode{capacity.Independent, capacity.Pack} {
		res, empty := bigResult(mode)
		c := Layout(res, empty, fontMetrics{})
		if len(c.Panels) != 9 {
			t.Errorf("%s: %d panels, want all hosts and 8 aggregates", mode, len(c.Panels))
		}
		checkLayout(t, c)
		// Without the empty cloud (bars scale to the largest count).
		checkLayout(t, Layout(res, nil, fontMetrics{}))
	}
	// More aggregates than panels: the rest are summed into one.
	res, empty := bigResult(capacity.Independent)
	for a := range 5 {
		u := fmt.Sprintf("00000000-0000-4000-9000-1000000000%02d", a)
		res.Aggregates = append(res.Aggregates, capacity.Aggregate{UUID: u, Hosts: 1, Free: make([]int64, 20)})
	}
	c := Layout(res, empty, fontMetrics{})
	checkLayout(t, c)
	if last := c.Panels[len(c.Panels)-1].Title; last != "6 other aggregates" {
		t.Errorf("last panel %q, want the 6 smallest summed", last)
	}
}

// TestGoldenImage draws the 20 × 8 chart and compares it with the golden
// PNG pixel for pixel (go test -update rewrites it; look at it before
// committing).
func TestGoldenImage(t *testing.T) {
	res, empty := bigResult(capacity.Independent)
	checkLayout(t, Layout(res, empty, fontMetrics{}))
	out := filepath.Join(t.TempDir(), "capacity.png")
	if err := Capacity(out, res, empty); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "capacity-20x8.png")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	gi, err := png.Decode(bytes.NewReader(got))
	if err != nil {
		t.Fatal(err)
	}
	wi, err := png.Decode(bytes.NewReader(want))
	if err != nil {
		t.Fatal(err)
	}
	if gi.Bounds() != wi.Bounds() {
		t.Fatalf("image %v, golden %v", gi.Bounds(), wi.Bounds())
	}
	diff := 0
	b := gi.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if gi.At(x, y) != wi.At(x, y) {
				diff++
			}
		}
	}
	if diff > 0 {
		t.Errorf("%d pixels differ from %s (go test -update rewrites it)", diff, golden)
	}
}

func TestSVG(t *testing.T) {
	res, empty := bigResult(capacity.Pack)
	out := filepath.Join(t.TempDir(), "c.svg")
	if err := Capacity(out, res, empty); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte("<svg")) || !bytes.Contains(b, []byte("gpu-nodes")) {
		t.Errorf("not an SVG of the chart: %.200s", b)
	}
}
