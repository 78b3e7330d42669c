package bench

import (
	"bytes"
	"encoding/xml"
	"errors"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// svgDoc is what the tests read back from a chart.
type svgDoc struct {
	Rects []struct {
		Class string  `xml:"class,attr"`
		X     float64 `xml:"x,attr"`
		Width string  `xml:"width,attr"`
	} `xml:"rect"`
	Series []struct {
		Backend string `xml:"data-backend,attr"`
		Circles []struct {
			Cx float64 `xml:"cx,attr"`
		} `xml:"circle"`
		Polygons []struct {
			Points string `xml:"points,attr"`
		} `xml:"polygon"`
		Labels []string `xml:"text"`
	} `xml:"g"`
	Texts []struct {
		Class string `xml:"class,attr"`
		Text  string `xml:",chardata"`
	} `xml:"text"`
}

// rowsOf builds rows of one backend from (ef, recall, queries/s) triples.
func rowsOf(backend string, pts ...[3]float64) []Row {
	var rows []Row
	for _, p := range pts {
		rows = append(rows, Row{Backend: backend, Ef: int(p[0]), K: 10, Recall: p[1], QPS: p[2]})
	}
	return rows
}

// siftsmallRows are the figures of a siftsmall run (docs/siftsmall.json):
// hnsw between 0.94 and 1, flat at 1, coder far behind at 0.228.
func siftsmallRows() []Row {
	rows := rowsOf("hnsw", [3]float64{10, 0.9410000000000004, 35740}, [3]float64{20, 0.9820000000000003, 26946},
		[3]float64{40, 0.995, 16324}, [3]float64{80, 0.9969999999999999, 9131}, [3]float64{160, 0.9990000000000001, 5127},
		[3]float64{320, 1, 3059})
	rows = append(rows, rowsOf("flat", [3]float64{0, 1, 2098})...)
	return append(rows, rowsOf("coder", [3]float64{10, 0.228, 7933}, [3]float64{20, 0.228, 7986}, [3]float64{40, 0.228, 3790},
		[3]float64{80, 0.228, 8331}, [3]float64{160, 0.228, 8261}, [3]float64{320, 0.2281, 5653})...)
}

func renderSVG(t *testing.T, rows []Row) (string, svgDoc) {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteSVG(&buf, rows, "siftsmall <test> & co"); err != nil {
		t.Fatal(err)
	}
	var doc svgDoc
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, buf.String())
	}
	return buf.String(), doc
}

// TestSVGFitsTheAxisToHNSW checks the chart of a siftsmall-like run: the
// hnsw points spread over most of the plot's width instead of the sliver
// an axis from coder's 0.23 left them, each labelled with its ef; coder's
// points sit at the left edge as triangles, listed in a note.
func TestSVGFitsTheAxisToHNSW(t *testing.T) {
	tests := []struct {
		name      string
		rows      []Row
		spread    float64 // least share of the width the hnsw points span
		offAxis   int     // coder points drawn at the edge
		noteParts []string
	}{
		{"siftsmall", siftsmallRows(), 0.6, 6, []string{"coder: 6 points left of the axis, recall 0.228"}},
		{"100k set, hnsw from 0.65", append(
			rowsOf("hnsw", [3]float64{10, 0.6539, 11996}, [3]float64{40, 0.9302, 5500}, [3]float64{320, 0.9987, 1601}),
			rowsOf("coder", [3]float64{10, 0.087, 4195}, [3]float64{20, 0.091, 4605})...), 0.8, 2,
			[]string{"coder: 2 points left of the axis, recall 0.087 to 0.091"}},
		{"coder close behind: nothing off the axis", append(
			rowsOf("hnsw", [3]float64{10, 0.90, 20000}, [3]float64{80, 0.99, 8000}),
			rowsOf("coder", [3]float64{10, 0.80, 15000}, [3]float64{80, 0.95, 6000})...), 0.3, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, doc := renderSVG(t, tt.rows)
			var plotX, plotW float64
			for _, r := range doc.Rects {
				if r.Class == "plot" {
					plotX = r.X
					plotW, _ = strconv.ParseFloat(r.Width, 64)
				}
			}
			if plotW == 0 {
				t.Fatal("no plot area")
			}
			var notes []string
			for _, tx := range doc.Texts {
				if tx.Class == "note" {
					notes = append(notes, tx.Text)
				}
			}
			for _, s := range doc.Series {
				lo, hi := math.Inf(1), math.Inf(-1)
				for _, c := range s.Circles {
					if c.Cx < plotX || c.Cx > plotX+plotW {
						t.Errorf("%s point at x %.1f, outside the plot [%.1f, %.1f]", s.Backend, c.Cx, plotX, plotX+plotW)
					}
					lo, hi = math.Min(lo, c.Cx), math.Max(hi, c.Cx)
				}
				switch s.Backend {
				case "hnsw":
					if got := (hi - lo) / plotW; got < tt.spread {
						t.Errorf("hnsw points span %.0f%% of the width, want at least %.0f%%", 100*got, 100*tt.spread)
					}
					for _, r := range tt.rows {
						if r.Backend == "hnsw" && !contains(s.Labels, "ef "+strconv.Itoa(r.Ef)) {
							t.Errorf("no label \"ef %d\" among %q", r.Ef, s.Labels)
						}
					}
				case "flat":
					if !contains(s.Labels, "exact") {
						t.Errorf("flat's point is not labelled exact: %q", s.Labels)
					}
				case "coder":
					if len(s.Polygons) != tt.offAxis {
						t.Errorf("%d coder points at the edge, want %d", len(s.Polygons), tt.offAxis)
					}
					for _, p := range s.Polygons {
						x, _, _ := strings.Cut(p.Points, ",")
						if v, _ := strconv.ParseFloat(x, 64); v != plotX {
							t.Errorf("an off-axis point at x %s, not the left edge %.1f", x, plotX)
						}
					}
				}
			}
			if len(notes) != len(tt.noteParts) {
				t.Fatalf("notes %q, want %d", notes, len(tt.noteParts))
			}
			for i, w := range tt.noteParts {
				if !strings.Contains(notes[i], w) {
					t.Errorf("note %q lacks %q", notes[i], w)
				}
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestSVGCoordinatesRounded checks that no attribute holds a number with
// more than one decimal (456.00000000000006 was written before) and that
// text is escaped.
func TestSVGCoordinatesRounded(t *testing.T) {
	svg, _ := renderSVG(t, siftsmallRows())
	attr := regexp.MustCompile(`\s[a-z-]+="([^"]*)"`)
	long := regexp.MustCompile(`\d\.\d{2,}`)
	n := 0
	for _, m := range attr.FindAllStringSubmatch(svg, -1) {
		if bad := long.FindString(m[1]); bad != "" {
			t.Errorf("attribute %s: %s has more than one decimal", strings.TrimSpace(m[0]), bad)
		}
		n++
	}
	if n < 50 {
		t.Fatalf("only %d attributes found", n)
	}
	if !strings.Contains(svg, "siftsmall &lt;test&gt; &amp; co") {
		t.Error("the title is not escaped")
	}
}

func TestRecallAxis(t *testing.T) {
	tests := []struct {
		name   string
		rows   []Row
		lo, hi float64
		ticks  []string
	}{
		{"siftsmall", siftsmallRows(), 0.92, 1, []string{"0.92", "0.94", "0.96", "0.98", "1.00"}},
		{"no hnsw: from 0.5", append(rowsOf("flat", [3]float64{0, 1, 100}), rowsOf("coder", [3]float64{10, 0.55, 900}, [3]float64{10, 0.3, 900})...),
			0.5, 1, []string{"0.5", "0.6", "0.7", "0.8", "0.9", "1.0"}},
		{"every recall below 0.5: all shown", rowsOf("coder", [3]float64{10, 0.1, 900}, [3]float64{20, 0.3, 800}),
			0.05, 0.35, []string{"0.05", "0.10", "0.15", "0.20", "0.25", "0.30", "0.35"}},
		{"hnsw below 0.5 widens the cut", append(rowsOf("hnsw", [3]float64{10, 0.42, 900}, [3]float64{40, 0.8, 500}), rowsOf("coder", [3]float64{10, 0.2, 900})...),
			0.4, 0.9, []string{"0.4", "0.5", "0.6", "0.7", "0.8", "0.9"}},
		{"one recall", rowsOf("flat", [3]float64{0, 1, 100}), 0.998, 1, []string{"0.998", "1.000"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := fitRecallAxis(tt.rows)
			if math.Abs(a.lo-tt.lo) > 1e-9 || math.Abs(a.hi-tt.hi) > 1e-9 {
				t.Errorf("axis [%v, %v], want [%v, %v]", a.lo, a.hi, tt.lo, tt.hi)
			}
			var ticks []string
			for _, x := range a.ticks() {
				ticks = append(ticks, strconv.FormatFloat(x, 'f', a.prec, 64))
			}
			if strings.Join(ticks, " ") != strings.Join(tt.ticks, " ") {
				t.Errorf("ticks %q, want %q", ticks, tt.ticks)
			}
		})
	}
}

// failingWriter fails every write after the first n bytes.
type failingWriter struct{ n int }

var errDiskFull = errors.New("disk full")

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) <= w.n {
		w.n -= len(p)
		return len(p), nil
	}
	n := w.n
	w.n = 0
	return n, errDiskFull
}

// TestSVGWriteErrors checks that a write error anywhere in the chart is
// returned, and that rows it cannot plot are refused.
func TestSVGWriteErrors(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSVG(&buf, siftsmallRows(), "t"); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 100, 4096, buf.Len() - 1} {
		if err := WriteSVG(&failingWriter{n: n}, siftsmallRows(), "t"); !errors.Is(err, errDiskFull) {
			t.Errorf("writer failing after %d of %d bytes: got %v", n, buf.Len(), err)
		}
	}
	for name, rows := range map[string][]Row{
		"no rows":        nil,
		"zero q/s":       rowsOf("hnsw", [3]float64{10, 0.9, 0}),
		"NaN recall":     rowsOf("hnsw", [3]float64{10, math.NaN(), 100}),
		"infinite q/s":   rowsOf("hnsw", [3]float64{10, 0.9, math.Inf(1)}),
		"recall above 1": rowsOf("hnsw", [3]float64{10, 1.5, 100}),
	} {
		if err := WriteSVG(&bytes.Buffer{}, rows, "t"); err == nil {
			t.Errorf("%s: plotted", name)
		}
	}
}
