package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
)

// ReadHnswlibResults reads the results file of the hnswlib side-by-side
// script (one JSON object a line: {"system": "hnswlib", "ef": 40,
// "recall": 0.936, "qps": 18631}, build lines without an ef, and the
// same script's lines for mnemo) and returns hnswlib's points as rows of
// backend "hnswlib", one per ef in ascending order, with the best
// queries/s of the repeated runs, as the script reports them. k is the
// rows' K (the script measures recall@10). Lines of other systems are
// skipped; a line that is not JSON is an error naming it.
func ReadHnswlibResults(r io.Reader, k int) ([]Row, error) {
	type line struct {
		System string   `json:"system"`
		Ef     *int     `json:"ef"`
		Recall float64  `json:"recall"`
		QPS    float64  `json:"qps"`
		Build  *float64 `json:"build_vps"`
		N      int      `json:"n"`
		Dim    int      `json:"dim"`
	}
	var rows []Row
	var buildVPS float64
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, fmt.Errorf("%w: hnswlib results line %d: %v", ErrFormat, n, err)
		}
		if l.System != "hnswlib" {
			continue
		}
		if l.Ef == nil {
			if l.Build != nil {
				buildVPS = max(buildVPS, *l.Build)
			}
			continue
		}
		i := slices.IndexFunc(rows, func(r Row) bool { return r.Ef == *l.Ef })
		if i < 0 {
			rows = append(rows, Row{Backend: "hnswlib", Ef: *l.Ef, K: k, Recall: l.Recall, Threads: 1})
			i = len(rows) - 1
		}
		rows[i].QPS = max(rows[i].QPS, l.QPS)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%w: no hnswlib results in the file", ErrFormat)
	}
	slices.SortFunc(rows, func(a, b Row) int { return a.Ef - b.Ef })
	for i := range rows {
		rows[i].BuildVPS = buildVPS
	}
	return rows, nil
}
