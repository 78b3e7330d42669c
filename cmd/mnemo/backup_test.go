package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBackupCommand: backup writes a copy that verify accepts and that
// holds the records; a second backup into the same directory fails with
// exit status 1; compact keeps the records.
func TestBackupCommand(t *testing.T) {
	root := t.TempDir()
	db, copyDir := filepath.Join(root, "db"), filepath.Join(root, "copy")
	data := writeTemp(t, `{"id":"a","vector":[1,0],"content":"alpha"}`+"\n"+`{"id":"b","vector":[0,1],"content":"beta"}`+"\n")
	steps := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"import", "--db", db, "--collection", "c", "--dim", "2", "--file", data}, 0, "committed 2"},
		{[]string{"backup", "--db", db, "--to", copyDir}, 0, "backed up"},
		{[]string{"verify", "--db", copyDir}, 0, ""},
		{[]string{"get", "--db", copyDir, "--collection", "c", "b"}, 0, "beta"},
		{[]string{"backup", "--db", db, "--to", copyDir}, 1, "not empty"},
		{[]string{"backup", "--db", db}, 2, "--to"},
		{[]string{"compact", "--db", db}, 0, "compacted"},
		{[]string{"get", "--db", db, "--collection", "c", "a"}, 0, "alpha"},
	}
	for _, st := range steps {
		var out, errOut bytes.Buffer
		code := run(t.Context(), st.args, &out, &errOut)
		if code != st.code || !strings.Contains(out.String()+errOut.String(), st.want) {
			t.Fatalf("%v: exit %d, stdout %q, stderr %q; want exit %d and %q", st.args, code, out.String(), errOut.String(), st.code, st.want)
		}
	}
	if _, err := os.Stat(filepath.Join(copyDir, "BACKUP-INCOMPLETE")); !os.IsNotExist(err) {
		t.Fatalf("the finished backup still has its marker: %v", err)
	}
}
