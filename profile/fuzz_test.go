package profile

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzParseMeta checks that any .meta content parses or fails cleanly:
// no panic, and sections that are returned never wrap around.
func FuzzParseMeta(f *testing.F) {
	for _, seed := range []string{
		`{"sections":[{"name":".text","start":140675611394048,"size":1047634}]}`,
		`{"Sections":[{"Name":".text.f","Start":4096,"Size":16},{"name":".data","start":0,"size":8}]}`,
		`{"SECTIONS":[]}`,
		`{"sections":[{"name":".text","start":18446744073709551615,"size":2}]}`,
		`{"sections":[{"name":".text","start":-1,"size":2}]}`,
		`{"sections":[{"name":".text","start":1.5e3,"size":2}]}`,
		`{"sections": [`,
		`[]`,
		``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		secs, err := ParseMeta(bytes.NewReader(data))
		if err != nil {
			if secs != nil {
				t.Errorf("ParseMeta returned sections %v with error %v", secs, err)
			}
			return
		}
		for _, s := range secs {
			if s.Limit() < s.Start {
				t.Errorf("section %+v wraps around", s)
			}
		}
	})
}

func TestParseMeta(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      string
		want    []Section
		wantErr string
	}{
		{
			name: "lower case",
			in:   `{"sections":[{"name":".text","start":140675611394048,"size":1047634}]}`,
			want: []Section{{Name: ".text", Start: 140675611394048, Size: 1047634}},
		},
		{
			name: "capitalized",
			in:   `{"Sections":[{"Name":".text.f","Start":4096,"Size":16},{"NAME":".bss","START":0,"SIZE":8}]}`,
			want: []Section{{Name: ".text.f", Start: 4096, Size: 16}, {Name: ".bss", Start: 0, Size: 8}},
		},
		{name: "empty list", in: `{"sections":[]}`, want: []Section{}},
		{name: "empty file", in: " \n", wantErr: "empty file"},
		{name: "no list", in: `{"objects":[]}`, wantErr: `no "sections" list`},
		{name: "truncated", in: `{"sections":[{"name":".text"`, wantErr: "malformed JSON"},
		{name: "syntax error", in: "{\"sections\":\n[{\"name\" \".text\"}]}", wantErr: "malformed JSON: line 2, column 10"},
		{name: "negative", in: `{"sections":[{"name":".text","start":-4096,"size":16}]}`, wantErr: "malformed JSON"},
		{name: "fraction", in: `{"sections":[{"name":".text","start":4096.5,"size":16}]}`, wantErr: "malformed JSON"},
		{name: "missing size", in: `{"sections":[{"name":".text","start":4096}]}`, wantErr: `section 0: missing ["size"]`},
		{name: "wraps", in: `{"sections":[{"name":".t","start":18446744073709551615,"size":2}]}`, wantErr: "wraps around"},
		{name: "trailing data", in: `{"sections":[]} {}`, wantErr: "trailing data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseMeta(strings.NewReader(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseMeta error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("ParseMeta = %+v, want %+v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("section %d = %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}
