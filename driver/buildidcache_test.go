package driver

import "testing"

// TestSubstitutes: a recorded name reads its substitute; two different
// substitutes for one name (two builds recorded under it) cancel out.
func TestSubstitutes(t *testing.T) {
	var s substitutes
	if got := s.of("/bin/a"); got != "/bin/a" {
		t.Errorf("no substitute: %q", got)
	}
	s.set("/bin/a", "/cache/1/elf")
	s.set("/bin/a", "/cache/1/elf")
	s.set("/bin/b", "/cache/2/elf")
	if got := s.of("/bin/a"); got != "/cache/1/elf" {
		t.Errorf("of(/bin/a) = %q", got)
	}
	s.set("/bin/b", "/cache/3/elf")
	if got := s.of("/bin/b"); got != "/bin/b" {
		t.Errorf("two builds under one name: of(/bin/b) = %q, want the name itself", got)
	}
	s.set("/bin/b", "/cache/2/elf")
	if got := s.of("/bin/b"); got != "/bin/b" {
		t.Errorf("a conflict is for good: of(/bin/b) = %q", got)
	}
}
