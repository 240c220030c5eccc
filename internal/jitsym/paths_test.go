package jitsym

import "testing"

func TestFilePath(t *testing.T) {
	tests := []struct {
		name    string
		version int
		file    string
		dirIdx  uint64
		dir     string
		dirOK   bool
		compDir string
		want    string
	}{
		{name: "v5 dir 0 is comp_dir", version: 5, file: "a.cc", dirIdx: 0, dir: "/build", dirOK: true, compDir: "/build", want: "/build/a.cc"},
		{name: "v5 relative dir", version: 5, file: "x.h", dirIdx: 1, dir: "include", dirOK: true, compDir: "/build", want: "/build/include/x.h"},
		{name: "v5 absolute dir", version: 5, file: "x.h", dirIdx: 1, dir: "/usr/include", dirOK: true, compDir: "/build", want: "/usr/include/x.h"},
		{name: "v5 absolute file", version: 5, file: "/src/a.c", dirIdx: 1, dir: "inc", dirOK: true, compDir: "/build", want: "/src/a.c"},
		{name: "v5 dir out of range", version: 5, file: "a.c", dirIdx: 9, compDir: "/build", want: "/build/a.c"},
		{name: "v4 dir 0 means comp_dir", version: 4, file: "a.c", dirIdx: 0, compDir: "/build", want: "/build/a.c"},
		{name: "v4 relative dir", version: 4, file: "a.c", dirIdx: 1, dir: "src", dirOK: true, compDir: "/build", want: "/build/src/a.c"},
		{name: "not cleaned", version: 4, file: "../x/./a.h", dirIdx: 1, dir: "src/", dirOK: true, compDir: "/build/", want: "/build/src/../x/./a.h"},
		{name: "no comp_dir", version: 4, file: "a.c", dirIdx: 1, dir: "src", dirOK: true, want: "src/a.c"},
		{name: "nothing but the name", version: 4, file: "a.c", want: "a.c"},
		{name: "windows absolute", version: 5, file: `C:\src\a.c`, dirIdx: 1, dir: "x", dirOK: true, compDir: "/b", want: `C:\src\a.c`},
		{name: "empty name", version: 4, file: "", dirIdx: 0, compDir: "/build", want: "/build/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := filePath(tt.version, tt.file, tt.dirIdx, tt.dir, tt.dirOK, tt.compDir); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
