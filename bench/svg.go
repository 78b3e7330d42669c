package bench

import (
	"fmt"
	"html"
	"io"
	"math"
	"sort"
)

// WriteSVG draws recall (x) against queries per second (y, log scale) as
// one line per backend (a point per ef), with labelled axes and a legend.
func WriteSVG(w io.Writer, rows []Row, title string) error {
	const W, H, left, right, top, bottom = 720, 480, 80, 170, 50, 60
	pw, ph := float64(W-left-right), float64(H-top-bottom)
	byBackend := map[string][]Row{}
	var names []string
	minQ, maxQ := math.Inf(1), math.Inf(-1)
	minR := 1.0
	for _, r := range rows {
		if _, ok := byBackend[r.Backend]; !ok {
			names = append(names, r.Backend)
		}
		byBackend[r.Backend] = append(byBackend[r.Backend], r)
		minQ, maxQ = math.Min(minQ, r.QPS), math.Max(maxQ, r.QPS)
		minR = math.Min(minR, r.Recall)
	}
	if len(rows) == 0 || minQ <= 0 {
		return fmt.Errorf("bench: nothing to plot")
	}
	x0 := math.Floor(minR*10) / 10
	lo, hi := math.Floor(math.Log10(minQ)), math.Ceil(math.Log10(maxQ))
	if hi == lo {
		hi++
	}
	px := func(recall float64) float64 { return left + (recall-x0)/(1-x0)*pw }
	py := func(q float64) float64 { return top + ph - (math.Log10(q)-lo)/(hi-lo)*ph }
	colors := []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"}
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", W, H, W, H)
	p(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
	p(`<text x="%d" y="25" font-size="15" font-weight="bold">%s</text>`+"\n", left, html.EscapeString(title))
	p(`<rect x="%d" y="%d" width="%g" height="%g" fill="none" stroke="#333"/>`+"\n", left, top, pw, ph)
	for e := lo; e <= hi; e++ {
		y := py(math.Pow(10, e))
		p(`<line x1="%d" x2="%g" y1="%g" y2="%g" stroke="#ddd"/><text x="%d" y="%g" text-anchor="end">%s</text>`+"\n",
			left, left+pw, y, y, left-6, y+4, humanQPS(math.Pow(10, e)))
	}
	for t := x0; t <= 1.0001; t += (1 - x0) / 5 {
		x := px(t)
		p(`<line x1="%g" x2="%g" y1="%d" y2="%g" stroke="#ddd"/><text x="%g" y="%g" text-anchor="middle">%.2f</text>`+"\n",
			x, x, top, top+ph, x, top+ph+18, t)
	}
	p(`<text x="%g" y="%d" text-anchor="middle">recall@%d</text>`+"\n", left+pw/2, H-15, rows[0].K)
	p(`<text transform="translate(20 %g) rotate(-90)" text-anchor="middle">queries per second (log scale)</text>`+"\n", top+ph/2)
	for i, name := range names {
		rs := byBackend[name]
		sort.Slice(rs, func(a, b int) bool { return rs[a].Recall < rs[b].Recall })
		c := colors[i%len(colors)]
		pts := ""
		for _, r := range rs {
			pts += fmt.Sprintf("%.1f,%.1f ", px(r.Recall), py(r.QPS))
		}
		p(`<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>`+"\n", pts, c)
		for _, r := range rs {
			p(`<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"><title>%s ef=%d: recall %.4f, %.0f q/s</title></circle>`+"\n",
				px(r.Recall), py(r.QPS), c, html.EscapeString(name), r.Ef, r.Recall, r.QPS)
		}
		ly := float64(top + 10 + 22*i)
		p(`<line x1="%g" x2="%g" y1="%g" y2="%g" stroke="%s" stroke-width="3"/><text x="%g" y="%g">%s</text>`+"\n",
			left+pw+15, left+pw+40, ly, ly, c, left+pw+46, ly+4, html.EscapeString(name))
	}
	p("</svg>\n")
	return nil
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
