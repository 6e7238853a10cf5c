// Package chart draws capacity's result as small multiples: one panel for
// all hosts and one per aggregate, a horizontal bar per flavor whose length
// is the share of what the same hosts would hold empty, labelled with the
// count. Bars of shares keep a flavor of 70 readable next to one of 9,135,
// and panels need no legend over the data. The layout is computed apart
// from the drawing (Layout), so that a test can check that no two labels
// overlap. PNG and SVG, with gonum/plot's vg (pure Go).
package chart

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"strings"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/rpctl/rpctl/capacity"
)

// maxAggregates panels are drawn besides "all hosts"; beyond, the smallest
// aggregates are summed into one panel.
const maxAggregates = 8

// Capacity draws res into path. empty is the same count on the cloud
// without allocations (same flavors, mode and hosts): each bar is res's
// count as a share of empty's.
func Capacity(path string, res, empty *capacity.Result) error {
	svg := strings.EqualFold(filepath.Ext(path), ".svg")
	if !svg && !strings.EqualFold(filepath.Ext(path), ".png") {
		return fmt.Errorf("%q: the chart is written as .png or .svg", path)
	}
	l := Layout(res, empty, fontMetrics{})
	var c vg.CanvasWriterTo
	w, h := vg.Length(l.Width), vg.Length(l.Height)
	if svg {
		c = vgsvg.New(w, h)
	} else {
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(144), vgimg.UseBackgroundColor(color.White))}
	}
	l.Draw(c)
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write chart %s: %w", path, err)
	}
	if _, err := c.WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("write chart %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write chart %s: %w", path, err)
	}
	return nil
}

// Box is a rectangle in points, origin at the bottom left as in vg.
type Box struct{ X, Y, W, H float64 }

// Intersects reports whether the boxes share any area.
func (b Box) Intersects(o Box) bool {
	return b.X < o.X+o.W && o.X < b.X+b.W && b.Y < o.Y+o.H && o.Y < b.Y+b.H
}

// Inside reports whether b lies within o.
func (b Box) Inside(o Box) bool {
	return b.X >= o.X && b.Y >= o.Y && b.X+b.W <= o.X+o.W && b.Y+b.H <= o.Y+o.H
}

// Text is one label: its string, size and the box it covers (its
// baseline is Box.Y + descent).
type Text struct {
	S    string
	Size float64
	Bold bool
	Box  Box
}

// Bar is a filled rectangle (a bar, or the track behind it).
type Bar struct {
	Box   Box
	Color color.Color
}

// Panel is one small multiple.
type Panel struct {
	Box   Box
	Title string
	Color color.Color
}

// Chart is a laid-out chart: everything Draw draws, with its place.
type Chart struct {
	Width, Height float64
	Panels        []Panel
	Bars          []Bar
	Texts         []Text
	// Grid lines (x, y0, y1) at 0, 50 and 100 %.
	Grid [][3]float64
}

// Metrics measures text; tests and drawing use the same fonts.
type Metrics interface {
	Width(s string, size float64, bold bool) float64
	// Extents are the ascent and descent of the font at size.
	Extents(size float64, bold bool) (ascent, descent float64)
}

type fontMetrics struct{}

func face(size float64, bold bool) font.Face {
	f := font.Font{Typeface: plot.DefaultFont.Typeface, Variant: "Sans"}
	if bold {
		f.Weight = xfont.WeightBold
	}
	return font.DefaultCache.Lookup(f, vg.Length(size))
}

func (fontMetrics) Width(s string, size float64, bold bool) float64 {
	fc := face(size, bold)
	return float64(fc.Width(s))
}

func (fontMetrics) Extents(size float64, bold bool) (float64, float64) {
	fc := face(size, bold)
	e := fc.Extents()
	return float64(e.Ascent), float64(e.Descent)
}

// Sizes, in points.
const (
	labelSize = 8.5
	titleSize = 10
	headSize  = 12
	pad       = 10
	gap       = 6
	barWidth  = 170
	rowHeight = 14
	barHeight = 9
)

// allHosts is the "all hosts" panel's colour: dark, apart from the
// aggregates' palette.
var allHostsColor = color.RGBA{0x37, 0x41, 0x51, 0xff}

// palette gives the aggregates distinct hues (Tableau 10 without its grey).
func palette(i int) color.Color {
	p := [...]uint32{0x4e79a7, 0xf28e2b, 0xe15759, 0x76b7b2, 0x59a14f, 0xedc948, 0xb07aa1, 0xff9da7, 0x9c755f}
	v := p[i%len(p)]
	return color.RGBA{uint8(v >> 16), uint8(v >> 8), uint8(v), 0xff}
}

// series is one panel's counts and the empty cloud's.
type series struct {
	title  string
	color  color.Color
	counts []int64
	empty  []int64
}

func panelsOf(res, empty *capacity.Result) []series {
	emptyAgg := map[string][]int64{}
	if empty != nil {
		for _, a := range empty.Aggregates {
			emptyAgg[a.UUID] = a.Free
		}
	}
	var emptyTotal []int64
	if empty != nil {
		emptyTotal = empty.Total
	}
	out := []series{{fmt.Sprintf("All hosts (%d)", len(res.Hosts)), allHostsColor, res.Total, emptyTotal}}
	aggs := append([]capacity.Aggregate(nil), res.Aggregates...)
	sum := func(a capacity.Aggregate) (s int64) {
		for _, n := range a.Free {
			s += n
		}
		return s
	}
	// Largest first; ties by UUID so the chart is the same every run.
	for i := 1; i < len(aggs); i++ {
		for j := i; j > 0 && (sum(aggs[j]) > sum(aggs[j-1]) || sum(aggs[j]) == sum(aggs[j-1]) && aggs[j].UUID < aggs[j-1].UUID); j-- {
			aggs[j], aggs[j-1] = aggs[j-1], aggs[j]
		}
	}
	for i, a := range aggs {
		if i == maxAggregates-1 && len(aggs) > maxAggregates {
			rest := series{title: fmt.Sprintf("%d other aggregates", len(aggs)-i), color: palette(i),
				counts: make([]int64, len(res.Flavors)), empty: make([]int64, len(res.Flavors))}
			for _, b := range aggs[i:] {
				for k, n := range b.Free {
					rest.counts[k] += n
				}
				for k, n := range emptyAgg[b.UUID] {
					rest.empty[k] += n
				}
			}
			out = append(out, rest)
			break
		}
		name := a.Name
		if name == "" {
			name = a.UUID
		}
		out = append(out, series{fmt.Sprintf("%s (%d hosts)", name, a.Hosts), palette(i), a.Free, emptyAgg[a.UUID]})
	}
	return out
}

// thousands prints n with thousands separators.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// valueLabel is a bar's label: the count, and the share of the empty cloud.
func valueLabel(n int64, empty []int64, i int) (string, float64) {
	if empty == nil || i >= len(empty) {
		return thousands(n), -1
	}
	if empty[i] == 0 {
		return thousands(n) + " (fits nowhere, even empty)", 0
	}
	share := float64(n) / float64(empty[i])
	return fmt.Sprintf("%s of %s (%.0f%%)", thousands(n), thousands(empty[i]), 100*share), share
}

// fit shortens s to width by cutting its middle, so that names sharing a
// prefix (UUIDs) stay apart.
func fit(m Metrics, s string, size float64, bold bool, width float64) string {
	if m.Width(s, size, bold) <= width {
		return s
	}
	r := []rune(s)
	for keep := len(r) - 1; keep > 2; keep-- {
		head := (keep + 1) / 2
		t := string(r[:head]) + "…" + string(r[len(r)-(keep-head):])
		if m.Width(t, size, bold) <= width {
			return t
		}
	}
	return string(r[:1]) + "…"
}

// Layout places every panel, bar and label of the chart.
func Layout(res, empty *capacity.Result, m Metrics) *Chart {
	ss := panelsOf(res, empty)
	asc, desc := m.Extents(labelSize, false)
	tAsc, tDesc := m.Extents(titleSize, true)
	hAsc, hDesc := m.Extents(headSize, true)

	flavorW := 0.0
	for _, f := range res.Flavors {
		flavorW = max(flavorW, m.Width(f, labelSize, false))
	}
	valueW := 0.0
	for _, s := range ss {
		for i, n := range s.counts {
			l, _ := valueLabel(n, s.empty, i)
			valueW = max(valueW, m.Width(l, labelSize, false))
		}
	}
	// Value labels stand in a column right of the bars' tracks.
	panelW := pad + flavorW + gap + barWidth + gap + valueW + pad
	titleH := tAsc + tDesc + gap
	axisH := asc + desc + gap
	panelH := pad + titleH + float64(len(res.Flavors))*rowHeight + axisH + pad
	cols := 3
	switch {
	case len(ss) == 1:
		cols = 1
	case len(ss) <= 4:
		cols = 2
	}
	rows := (len(ss) + cols - 1) / cols
	headH := hAsc + hDesc + 2*gap
	head := "Free slots per flavor: count, and share of what the same hosts hold empty"
	if res.Mode == capacity.Pack {
		head = "Instances a greedy fill of the mix places, per flavor: count, and share of the empty cloud's"
	}
	if empty == nil {
		head = "Free slots per flavor"
	}
	c := &Chart{Width: max(float64(cols)*panelW, m.Width(head, headSize, true)) + 2*pad, Height: float64(rows)*panelH + headH + 2*pad}
	head = fit(m, head, headSize, true, c.Width-2*pad)
	c.Texts = append(c.Texts, Text{S: head, Size: headSize, Bold: true,
		Box: Box{X: pad, Y: c.Height - pad - hAsc - hDesc, W: m.Width(head, headSize, true), H: hAsc + hDesc}})

	for pi, s := range ss {
		x0 := pad + float64(pi%cols)*panelW
		top := c.Height - pad - headH - float64(pi/cols)*panelH
		pb := Box{X: x0, Y: top - panelH, W: panelW, H: panelH}
		c.Panels = append(c.Panels, Panel{Box: pb, Title: s.title, Color: s.color})
		title := fit(m, s.title, titleSize, true, panelW-2*pad)
		ty := top - pad - tAsc - tDesc
		c.Texts = append(c.Texts, Text{S: title, Size: titleSize, Bold: true, Box: Box{X: x0 + pad, Y: ty, W: m.Width(title, titleSize, true), H: tAsc + tDesc}})
		barX := x0 + pad + flavorW + gap
		rowTop := ty - gap
		// Bars scale to their share when the empty cloud is known, else
		// to the panel's largest count.
		var most int64
		for _, n := range s.counts {
			most = max(most, n)
		}
		for i, f := range res.Flavors {
			rowY := rowTop - float64(i+1)*rowHeight
			mid := rowY + rowHeight/2
			textY := mid - (asc+desc)/2
			c.Texts = append(c.Texts, Text{S: f, Size: labelSize, Box: Box{X: barX - gap - m.Width(f, labelSize, false), Y: textY, W: m.Width(f, labelSize, false), H: asc + desc}})
			c.Bars = append(c.Bars, Bar{Box: Box{X: barX, Y: mid - barHeight/2, W: barWidth, H: barHeight}, Color: color.RGBA{0xee, 0xee, 0xee, 0xff}})
			label, share := valueLabel(s.counts[i], s.empty, i)
			if share < 0 {
				share = 0
				if most > 0 {
					share = float64(s.counts[i]) / float64(most)
				}
			}
			length := min(share, 1) * barWidth
			if length > 0 {
				c.Bars = append(c.Bars, Bar{Box: Box{X: barX, Y: mid - barHeight/2, W: length, H: barHeight}, Color: s.color})
			}
			c.Texts = append(c.Texts, Text{S: label, Size: labelSize, Box: Box{X: barX + barWidth + gap, Y: textY, W: m.Width(label, labelSize, false), H: asc + desc}})
		}
		barsBottom := rowTop - float64(len(res.Flavors))*rowHeight
		for k, tick := range []string{"0%", "50%", "100%"} {
			x := barX + float64(k)*barWidth/2
			c.Grid = append(c.Grid, [3]float64{x, barsBottom, rowTop})
			w := m.Width(tick, labelSize, false)
			c.Texts = append(c.Texts, Text{S: tick, Size: labelSize, Box: Box{X: x - w/2, Y: barsBottom - gap/2 - asc - desc, W: w, H: asc + desc}})
		}
	}
	return c
}

// Draw paints the chart on c.
func (ch *Chart) Draw(c vg.Canvas) {
	rect := func(b Box) vg.Path {
		var p vg.Path
		p.Move(vg.Point{X: vg.Length(b.X), Y: vg.Length(b.Y)})
		p.Line(vg.Point{X: vg.Length(b.X + b.W), Y: vg.Length(b.Y)})
		p.Line(vg.Point{X: vg.Length(b.X + b.W), Y: vg.Length(b.Y + b.H)})
		p.Line(vg.Point{X: vg.Length(b.X), Y: vg.Length(b.Y + b.H)})
		p.Close()
		return p
	}
	c.SetColor(color.White)
	c.Fill(rect(Box{0, 0, ch.Width, ch.Height}))
	for _, p := range ch.Panels {
		c.SetColor(color.RGBA{0xfa, 0xfa, 0xfa, 0xff})
		c.Fill(rect(Box{p.Box.X + 2, p.Box.Y + 2, p.Box.W - 4, p.Box.H - 4}))
		// A strip of the panel's colour ties its title to its bars.
		c.SetColor(p.Color)
		c.Fill(rect(Box{p.Box.X + 2, p.Box.Y + p.Box.H - 5, p.Box.W - 4, 3}))
	}
	for _, b := range ch.Bars {
		c.SetColor(b.Color)
		c.Fill(rect(b.Box))
	}
	c.SetColor(color.RGBA{0xbb, 0xbb, 0xbb, 0xff})
	c.SetLineWidth(vg.Points(0.5))
	for _, g := range ch.Grid {
		var p vg.Path
		p.Move(vg.Point{X: vg.Length(g[0]), Y: vg.Length(g[1])})
		p.Line(vg.Point{X: vg.Length(g[0]), Y: vg.Length(g[2])})
		c.Stroke(p)
	}
	c.SetColor(color.Black)
	for _, t := range ch.Texts {
		fc := face(t.Size, t.Bold)
		e := fc.Extents()
		c.FillString(fc, vg.Point{X: vg.Length(t.Box.X), Y: vg.Length(t.Box.Y) + e.Descent}, t.S)
	}
}
