package testtool

import "testing"

func TestRequired(t *testing.T) {
	for _, c := range []struct {
		ci, makelevel string
		want          bool
	}{
		{"", "", false},
		{"true", "", true},
		{"", "1", true},
	} {
		t.Setenv("CI", c.ci)
		t.Setenv("MAKELEVEL", c.makelevel)
		if got := Required(); got != c.want {
			t.Errorf("CI=%q MAKELEVEL=%q: Required() = %v, want %v", c.ci, c.makelevel, got, c.want)
		}
	}
}
