// Package chart draws rpctl's charts with gonum/plot (pure Go; PNG and SVG).
package chart

import (
	"fmt"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/rpctl/rpctl/capacity"
)

// FormatOf returns the image format a file name asks for: png or svg.
func FormatOf(path string) (string, error) {
	switch ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), ".")); ext {
	case "png", "svg":
		return ext, nil
	default:
		return "", fmt.Errorf("%q: the chart is written as .png or .svg", path)
	}
}

// maxSeries keeps a chart readable: the aggregates with the most room are
// drawn, the rest are summed into one bar.
const maxSeries = 8

type series struct {
	name string
	vals []float64
}

// Capacity draws the free slots per flavor (groups along the x axis), one
// bar per aggregate (or one for all hosts when the hosts are in none).
func Capacity(path string, res *capacity.Result) error {
	if _, err := FormatOf(path); err != nil {
		return err
	}
	ss := capacitySeries(res)
	p := plot.New()
	p.Title.Text = "Free slots per flavor and aggregate"
	if res.Mode == capacity.Pack {
		p.Title.Text = "Instances placed by a greedy fill of the mix, per flavor and aggregate"
	}
	p.Y.Label.Text = "instances that still fit"
	p.X.Label.Text = "flavor"
	w := vg.Points(14)
	if len(ss) > 4 {
		w = vg.Points(9)
	}
	top := 0.0
	for i, s := range ss {
		bars, err := plotter.NewBarChart(plotter.Values(s.vals), w)
		if err != nil {
			return err
		}
		bars.LineStyle.Width = vg.Length(0)
		bars.Color = plotutil.Color(i)
		bars.Offset = vg.Length(float64(i)-float64(len(ss)-1)/2) * w
		p.Add(bars)
		p.Legend.Add(s.name, bars)
		// The count above each bar: a short bar next to a tall one is
		// otherwise unreadable.
		xys := plotter.XYLabels{XYs: make(plotter.XYs, len(s.vals)), Labels: make([]string, len(s.vals))}
		for k, v := range s.vals {
			xys.XYs[k] = plotter.XY{X: float64(k), Y: v}
			xys.Labels[k] = fmt.Sprintf("%.0f", v)
			top = max(top, v)
		}
		labels, err := plotter.NewLabels(xys)
		if err != nil {
			return err
		}
		for k := range labels.TextStyle {
			labels.TextStyle[k].Font.Size = vg.Points(7)
			labels.TextStyle[k].XAlign = -0.5
		}
		labels.Offset = vg.Point{X: bars.Offset, Y: vg.Points(2)}
		p.Add(labels)
	}
	// Head room for the legend and the labels.
	p.Y.Min, p.Y.Max = 0, max(top*1.25, 1)
	p.Legend.Top = true
	p.Legend.Left = false
	p.Add(plotter.NewGrid())
	p.NominalX(res.Flavors...)
	p.X.Tick.Label.Rotation = 0.5
	p.X.Tick.Label.XAlign = -1
	p.X.Tick.Label.YAlign = -0.5
	width := vg.Length(len(res.Flavors)*len(ss))*w*1.6 + 4*vg.Centimeter
	width = max(width, 16*vg.Centimeter)
	if err := p.Save(width, 12*vg.Centimeter, path); err != nil {
		return fmt.Errorf("write chart %s: %w", path, err)
	}
	return nil
}

func capacitySeries(res *capacity.Result) []series {
	toF := func(v []int64) []float64 {
		out := make([]float64, len(v))
		for i, n := range v {
			out[i] = float64(n)
		}
		return out
	}
	all := series{fmt.Sprintf("all %d hosts", len(res.Hosts)), toF(res.Total)}
	if len(res.Aggregates) == 0 {
		return []series{all}
	}
	aggs := append([]capacity.Aggregate(nil), res.Aggregates...)
	sum := func(a capacity.Aggregate) int64 {
		var s int64
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
	out := []series{all}
	for i, a := range aggs {
		if i == maxSeries-2 && len(aggs) > maxSeries-1 {
			rest := make([]float64, len(res.Flavors))
			for _, b := range aggs[i:] {
				for k, n := range b.Free {
					rest[k] += float64(n)
				}
			}
			out = append(out, series{fmt.Sprintf("%d other aggregates", len(aggs)-i), rest})
			break
		}
		label := a.Name
		if label == "" {
			label = shortUUID(a.UUID)
		}
		out = append(out, series{fmt.Sprintf("aggregate %s (%d hosts)", label, a.Hosts), toF(a.Free)})
	}
	return out
}

func shortUUID(u string) string {
	if len(u) > 8 {
		return u[:8]
	}
	return u
}
