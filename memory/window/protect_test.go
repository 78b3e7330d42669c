package window

import "testing"

// TestSystemPromptAndProtection pins what the package doc says: a system
// prompt recorded with Record is trimmed like any message, one recorded
// with RecordProtected is kept alone, and protecting a message in a later
// round keeps that whole round, its user message included.
func TestSystemPromptAndProtection(t *testing.T) {
	for _, tt := range []struct {
		name      string
		protect   func(w *Window, m Message) error
		inRound   bool // record the instruction inside the first round
		wantSmall string
	}{
		{"Record", record, false, "U3 A3"},
		{"RecordProtected", recordProtected, false, "SYS U3 A3"},
		{"RecordProtected in a round", recordProtected, true, "U1 SYS A1 U3 A3"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w, _ := New(5, &Options{Counter: byLen})
			sys := Message{Role: System, Content: "SYS"}
			if !tt.inRound {
				if err := tt.protect(w, sys); err != nil {
					t.Fatal(err)
				}
			}
			mustRecord(t, w, Message{Role: User, Content: "U1"})
			if tt.inRound {
				if err := tt.protect(w, sys); err != nil {
					t.Fatal(err)
				}
			}
			for _, c := range []string{"A1", "U2", "A2", "U3", "A3"} {
				role := Assistant
				if c[0] == 'U' {
					role = User
				}
				mustRecord(t, w, Message{Role: role, Content: c})
			}
			if got, _ := w.Context(ctx); contents(got) != tt.wantSmall {
				t.Fatalf("Context = %q, want %q", contents(got), tt.wantSmall)
			}
		})
	}
}

var (
	record          = func(w *Window, m Message) error { return w.Record(ctx, m) }
	recordProtected = func(w *Window, m Message) error { return w.RecordProtected(ctx, m) }
)
