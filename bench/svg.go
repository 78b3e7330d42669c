package bench

import (
	"bufio"
	"errors"
	"fmt"
	"html"
	"io"
	"math"
	"slices"
	"strings"
)

// Chart layout, in SVG user units: the plot area sits inside these
// margins, with the legend on the right and notes below.
const (
	chartWidth, plotHeight             = 720, 370
	marginLeft, marginRight, marginTop = 80, 170, 50
	noteLine                           = 16
)

var seriesColors = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"}

// WriteSVG draws recall@k (x) against queries per second (y, log scale):
// one line per backend through its points in ef order, each point
// labelled with its ef ("exact" for an exact scan, ef 0), and a legend.
//
// The x axis is fitted to the recalls that matter rather than to the
// lowest of all: it spans the points whose recall is at least the lower of
// 0.5 and the hnsw curve's lowest recall, with a small margin, on round
// ticks. A backend far behind the others (coder/hnsw at recall 0.23 on
// siftsmall, beside hnsw between 0.94 and 1) would otherwise squeeze every
// point worth comparing into a sliver of the width. Points left of the
// axis are drawn at its left edge as hollow triangles pointing left, and
// a note under the chart gives their backend and recalls. The axis stays
// linear in recall, which reads directly; a log-odds axis (1-recall on a
// log scale) would show every point but puts recall 1 at infinity.
//
// Coordinates are written with one decimal. The chart is written through
// a bufio.Writer, whose first write error sticks; WriteSVG returns it.
func WriteSVG(w io.Writer, rows []Row, title string) error {
	if len(rows) == 0 {
		return errors.New("bench: nothing to plot")
	}
	for _, r := range rows {
		if !(r.QPS > 0) || math.IsInf(r.QPS, 1) || !(r.Recall >= 0 && r.Recall <= 1) {
			return fmt.Errorf("bench: cannot plot %s ef=%d: recall %v at %v queries/s", r.Backend, r.Ef, r.Recall, r.QPS)
		}
	}
	bw := bufio.NewWriter(w)
	newChart(rows).write(bw, title)
	return bw.Flush()
}

// chart is the geometry of one chart: its axes and series.
type chart struct {
	x       recallAxis
	qLo     float64 // log10 of the queries/s at the bottom edge
	qHi     float64 // and at the top edge
	series  []series
	notes   []string
	k       int
	plotW   float64
	height  float64
	plotTop float64
}

// series is one backend's points, in ef order.
type series struct {
	name  string
	color string
	rows  []Row
}

func newChart(rows []Row) *chart {
	c := &chart{x: fitRecallAxis(rows), k: rows[0].K, plotW: chartWidth - marginLeft - marginRight, plotTop: marginTop}
	minQ, maxQ := math.Inf(1), math.Inf(-1)
	for _, r := range rows {
		minQ, maxQ = math.Min(minQ, r.QPS), math.Max(maxQ, r.QPS)
		i := slices.IndexFunc(c.series, func(s series) bool { return s.name == r.Backend })
		if i < 0 {
			i = len(c.series)
			c.series = append(c.series, series{name: r.Backend, color: seriesColors[i%len(seriesColors)]})
		}
		c.series[i].rows = append(c.series[i].rows, r)
	}
	c.qLo, c.qHi = math.Floor(math.Log10(minQ)), math.Ceil(math.Log10(maxQ))
	if c.qHi == c.qLo {
		c.qHi++
	}
	for i := range c.series {
		s := &c.series[i]
		slices.SortStableFunc(s.rows, func(a, b Row) int { return a.Ef - b.Ef })
		if note := c.offAxisNote(s); note != "" {
			c.notes = append(c.notes, note)
		}
	}
	c.height = marginTop + plotHeight + 50
	if len(c.notes) > 0 {
		c.height += 10 + noteLine*float64(len(c.notes))
	}
	return c
}

// offAxisNote describes the points of s left of the x axis, if any.
func (c *chart) offAxisNote(s *series) string {
	lo, hi, n := math.Inf(1), math.Inf(-1), 0
	for _, r := range s.rows {
		if r.Recall < c.x.lo {
			lo, hi, n = math.Min(lo, r.Recall), math.Max(hi, r.Recall), n+1
		}
	}
	if n == 0 {
		return ""
	}
	recalls := fmt.Sprintf("recall %.3f", lo)
	if hi-lo >= 0.0005 {
		recalls = fmt.Sprintf("recall %.3f to %.3f", lo, hi)
	}
	points := "1 point"
	if n > 1 {
		points = fmt.Sprintf("%d points", n)
	}
	return fmt.Sprintf("%s: %s left of the axis, %s (drawn \u25c1 at its edge)", s.name, points, recalls)
}

// px and py map a recall and a queries/s to SVG coordinates; a recall
// left of the axis maps to its left edge.
func (c *chart) px(recall float64) float64 {
	return marginLeft + (math.Max(recall, c.x.lo)-c.x.lo)/(c.x.hi-c.x.lo)*c.plotW
}

func (c *chart) py(qps float64) float64 {
	return c.plotTop + plotHeight - (math.Log10(qps)-c.qLo)/(c.qHi-c.qLo)*plotHeight
}

// write writes the SVG to w, ignoring write errors: w is a bufio.Writer,
// which keeps the first for its Flush.
func (c *chart) write(w io.Writer, title string) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	left, top, pw, ph := float64(marginLeft), c.plotTop, c.plotW, float64(plotHeight)
	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%.0f" viewBox="0 0 %d %.0f" font-family="sans-serif" font-size="12">`+"\n",
		chartWidth, c.height, chartWidth, c.height)
	p(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
	p(`<text x="%.1f" y="25.0" font-size="15" font-weight="bold">%s</text>`+"\n", left, html.EscapeString(title))
	p(`<rect class="plot" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="none" stroke="#333"/>`+"\n", left, top, pw, ph)
	for e := c.qLo; e <= c.qHi; e++ {
		y := c.py(math.Pow(10, e))
		p(`<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#ddd"/><text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n",
			left, left+pw, y, y, left-6, y+4, humanQPS(math.Pow(10, e)))
	}
	for _, t := range c.x.ticks() {
		x := c.px(t)
		p(`<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#ddd"/><text x="%.1f" y="%.1f" text-anchor="middle">%.*f</text>`+"\n",
			x, x, top, top+ph, x, top+ph+18, c.x.prec, t)
	}
	p(`<text x="%.1f" y="%.1f" text-anchor="middle">recall@%d</text>`+"\n", left+pw/2, top+ph+38, c.k)
	p(`<text transform="translate(20.0 %.1f) rotate(-90)" text-anchor="middle">queries per second (log scale)</text>`+"\n", top+ph/2)
	for i, s := range c.series {
		c.writeSeries(p, s)
		ly := top + 10 + 22*float64(i)
		p(`<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="3"/><text x="%.1f" y="%.1f">%s</text>`+"\n",
			left+pw+15, left+pw+40, ly, ly, s.color, left+pw+46, ly+4, html.EscapeString(s.name))
	}
	for i, note := range c.notes {
		p(`<text class="note" x="%.1f" y="%.1f" font-size="11" fill="#555">%s</text>`+"\n", left, top+ph+62+noteLine*float64(i), html.EscapeString(note))
	}
	p("</svg>\n")
}

// writeSeries draws one backend: a line through its points on the axis,
// each a dot labelled with its ef, and its points left of the axis as
// hollow triangles at the edge.
func (c *chart) writeSeries(p func(string, ...any), s series) {
	name := html.EscapeString(s.name)
	p(`<g class="series" data-backend="%s">`+"\n", name)
	var pts []string
	for _, r := range s.rows {
		if r.Recall >= c.x.lo {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", c.px(r.Recall), c.py(r.QPS)))
		}
	}
	if len(pts) > 1 {
		p(`<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>`+"\n", strings.Join(pts, " "), s.color)
	}
	for _, r := range s.rows {
		x, y := c.px(r.Recall), c.py(r.QPS)
		tip := fmt.Sprintf("%s ef=%d: recall %.4f, %.0f q/s", name, r.Ef, r.Recall, r.QPS)
		if r.Recall < c.x.lo {
			p(`<polygon points="%.1f,%.1f %.1f,%.1f %.1f,%.1f" fill="white" stroke="%s" stroke-width="1.5"><title>%s, left of the axis</title></polygon>`+"\n",
				x, y, x+8, y-5, x+8, y+5, s.color, tip)
			continue
		}
		p(`<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"><title>%s</title></circle>`+"\n", x, y, s.color, tip)
		label := fmt.Sprintf("ef %d", r.Ef)
		if r.Ef == 0 {
			label = "exact"
		}
		// Labels go up and right of their point, or up and left near the
		// right edge, where the legend is.
		lx, anchor := x+6, "start"
		if x > marginLeft+c.plotW-45 {
			lx, anchor = x-6, "end"
		}
		p(`<text class="label" x="%.1f" y="%.1f" font-size="10" fill="%s" text-anchor="%s">%s</text>`+"\n", lx, y-6, s.color, anchor, label)
	}
	p("</g>\n")
}

// recallAxis is the x axis: recalls from lo to hi, a tick every step,
// tick labels with prec decimals.
type recallAxis struct {
	lo, hi, step float64
	prec         int
}

// fitRecallAxis fits the axis to the recalls of rows at or above the lower
// of 0.5 and the lowest recall of the "hnsw" backend (all recalls, if
// none is), with a margin of 5% of their span on each side, widened to
// round ticks, within [0, 1].
func fitRecallAxis(rows []Row) recallAxis {
	cut := 0.5
	for _, r := range rows {
		if r.Backend == "hnsw" {
			cut = math.Min(cut, r.Recall)
		}
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range rows {
		if r.Recall >= cut {
			lo, hi = math.Min(lo, r.Recall), math.Max(hi, r.Recall)
		}
	}
	if lo > hi {
		for _, r := range rows {
			lo, hi = math.Min(lo, r.Recall), math.Max(hi, r.Recall)
		}
	}
	span := math.Max(hi-lo, 0.01)
	step := niceStep(span / 5)
	a := recallAxis{step: step, prec: max(0, int(math.Ceil(-math.Log10(step)-1e-9)))}
	a.lo = math.Max(0, math.Floor((lo-span/20)/step+1e-9)*step)
	a.hi = math.Min(1, math.Ceil((hi+span/20)/step-1e-9)*step)
	return a
}

// ticks returns the recalls of the ticks, lo to hi.
func (a recallAxis) ticks() []float64 {
	n := int(math.Round((a.hi - a.lo) / a.step))
	t := make([]float64, n+1)
	for i := range t {
		t[i] = a.lo + float64(i)*a.step
	}
	return t
}

// niceStep returns the smallest of 1, 2 or 5 times a power of ten that is
// at least x.
func niceStep(x float64) float64 {
	e := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5} {
		if x <= m*e*(1+1e-9) {
			return m * e
		}
	}
	return 10 * e
}

func humanQPS(q float64) string {
	switch {
	case q >= 1e6:
		return fmt.Sprintf("%gM", q/1e6)
	case q >= 1e3:
		return fmt.Sprintf("%gk", q/1e3)
	}
	return fmt.Sprintf("%g", q)
}
