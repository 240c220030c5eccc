package profile

import (
	"bytes"
	"encoding/json"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// FuzzParseMeta checks that any .meta content parses or fails cleanly:
// no panic, sections that are returned never wrap around, and the
// streaming decoder accepts exactly what encoding/json decoding the whole
// document at once accepts, with the same sections.
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
		want, ok := wholeDocumentMeta(data)
		if err != nil {
			if secs != nil {
				t.Errorf("ParseMeta returned sections %v with error %v", secs, err)
			}
			if ok && len(data) <= maxMetaSize {
				t.Errorf("ParseMeta refuses what decoding the whole document accepts (%v): %v", want, err)
			}
			return
		}
		for _, s := range secs {
			if s.Limit() < s.Start {
				t.Errorf("section %+v wraps around", s)
			}
		}
		if !ok || !slices.Equal(secs, want) {
			t.Errorf("ParseMeta = %v; decoding the whole document gives %v, %v", secs, want, ok)
		}
	})
}

// wholeDocumentMeta decodes a .meta document at once with
// json.Unmarshal, as ParseMeta did before it streamed: the reference the
// fuzzer compares it with. ok is false where that rejects the document
// (ParseMeta's error cases that are not JSON errors are checked too).
func wholeDocumentMeta(data []byte) ([]Section, bool) {
	var doc struct{ Sections *[]metaSection }
	if err := json.Unmarshal(data, &doc); err != nil || doc.Sections == nil {
		return nil, false
	}
	secs := []Section{}
	for i, ms := range *doc.Sections {
		s, err := ms.section(i)
		if err != nil {
			return nil, false
		}
		secs = append(secs, s)
	}
	return secs, true
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
		{name: "syntax error", in: "{\"sections\":\n[{\"name\" \".text\"}]}", wantErr: "malformed JSON: line 2, column 2: section 0: invalid character"},
		{name: "syntax error between entries", in: "{\"sections\":[\n\n   {\"name\":\".text\",\"start\":1,\"size\":1} {}]}", wantErr: "malformed JSON: line 3, column 40: section 1: expected comma after array element"},
		{name: "error after a long run of spaces", in: `{"sections":[]` + strings.Repeat(" ", 10000) + `x}`, wantErr: "malformed JSON: line 1, column 10015: invalid character 'x'"},
		{name: "error after long runs of spaces and lines", in: "{\"sections\":[]" + strings.Repeat(" \n", 9000) + "\n  x}", wantErr: "malformed JSON: line 9002, column 3: invalid character 'x'"},
		{name: "long runs of spaces in a name are kept", in: `{"sections":[{"name":"a\"` + strings.Repeat(" ", 5000) + `b\\","start":1,"size":1}]}`,
			want: []Section{{Name: `a"` + strings.Repeat(" ", 5000) + `b\`, Start: 1, Size: 1}}},
		{name: "not an object", in: "[1]", wantErr: "malformed JSON: line 1, column 1: the document is a list, not an object"},
		{name: "sections not a list", in: `{"sections":{}}`, wantErr: `"sections" is an object, not a list`},
		{name: "other members skipped", in: `{"x":[1,{"y":[]}],"sections":[{"name":"a","start":1,"size":2}],"z":{}}`, want: []Section{{Name: "a", Start: 1, Size: 2}}},
		{name: "negative", in: `{"sections":[{"name":".text","start":-4096,"size":16}]}`, wantErr: "malformed JSON"},
		{name: "fraction", in: `{"sections":[{"name":".text","start":4096.5,"size":16}]}`, wantErr: "malformed JSON"},
		{name: "missing size", in: `{"sections":[{"name":".text","start":4096}]}`, wantErr: `section 0: missing ["size"]`},
		{name: "wraps", in: `{"sections":[{"name":".t","start":18446744073709551615,"size":2}]}`, wantErr: "wraps around"},
		{name: "trailing data", in: `{"sections":[]} {}`, wantErr: "trailing data"},
		{name: "name bytes that are not UTF-8 are kept", in: "{\"sections\":[{\"name\":\".\x8bss\\u00e9\",\"start\":1,\"size\":1}]}",
			want: []Section{{Name: ".\x8bss\u00e9", Start: 1, Size: 1}}},
		{name: "name not a string", in: `{"sections":[{"name":12,"start":1,"size":1}]}`, wantErr: "section 0: name is a number, not a string"},
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

// TestMetaNameAsEncodingJSON: a name that is UTF-8 decodes as
// encoding/json decodes the string, escapes and surrogates included.
func TestMetaNameAsEncodingJSON(t *testing.T) {
	for _, in := range []string{
		`""`, `"a.text"`, `"\"\\\/\b\f\n\r\t"`, `"\u00e9\u20AC"`, `"é€😀"`,
		`"\ud83d\ude00"`, `"\ud83d"`, `"\ud83dx"`, `"\ude00\ud83d"`, `"\ud83d\u0041"`, `"\ud83d\ud83d\ude00"`,
	} {
		var want string
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		var got metaName
		if err := json.Unmarshal([]byte(in), &got); err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; encoding/json gives %q", in, got, err, want)
		}
	}
}

// TestParseMetaStreams: a .meta document is decoded as it is read: 64 MiB
// of it (white space around a few sections, which JSON allows) costs the
// sections, not the document.
func TestParseMetaStreams(t *testing.T) {
	const pad = 64 << 20
	doc := `{"sections":[{"name":".text","start":4096,"size":16},` + strings.Repeat(" ", pad) +
		`{"name":".data","start":8192,"size":8}]}`
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	secs, err := ParseMeta(strings.NewReader(doc))
	runtime.ReadMemStats(&after)
	if err != nil || len(secs) != 2 {
		t.Fatalf("ParseMeta: %v, %v", secs, err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
		t.Errorf("decoding a %d MiB document allocated %d MiB", len(doc)>>20, alloc>>20)
	}
}
