package jitsym

import "strings"

// This file reproduces how llvm-symbolizer 14 turns a line table's file
// entry into the path it prints (DWARFDebugLine::Prologue::
// getFileNameByIndex with FileLineInfoKind::AbsoluteFilePath). Unlike
// Go's debug/dwarf, it never cleans the path: "./a.h" and "x/../a.h" stay
// as written, so the result is byte-for-byte what llvm-symbolizer prints.

// isAbsPath reports whether p is absolute in POSIX or Windows syntax
// (LLVM's isPathAbsoluteOnWindowsOrPosix).
func isAbsPath(p string) bool {
	if strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\\`) {
		return true
	}
	// A drive letter followed by a separator: C:\ or C:/.
	return len(p) >= 3 && isLetter(p[0]) && p[1] == ':' && (p[2] == '\\' || p[2] == '/')
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// appendPath appends component c to path p the way llvm::sys::path::append
// does in POSIX style: a separator goes between them unless p is empty or
// already ends in one, in which case leading separators of c are dropped.
func appendPath(p, c string) string {
	switch {
	case p == "":
		return c
	case strings.HasSuffix(p, "/"):
		return p + strings.TrimLeft(c, "/")
	case strings.HasPrefix(c, "/"):
		return p + c
	}
	return p + "/" + c
}

// filePath returns the path llvm-symbolizer prints for a file entry named
// name in directory entry dir (whose path is dirPath; ok is false when the
// index is out of range), in a line table of the given version, for a
// compilation unit whose DW_AT_comp_dir is compDir.
//
// A worked example with DWARF 5, comp_dir "/build": directory 0 is
// "/build", directory 1 is "include"; file "a.cc" in directory 0 prints as
// "/build/a.cc" (directory 0 is the compilation directory, so comp_dir is
// not added again), file "x.h" in directory 1 as "/build/include/x.h". In
// DWARF 4 the directory list starts at index 1 and index 0 means the
// compilation directory, so "a.cc" in directory 0 prints as "/build/a.cc".
func filePath(version int, name string, dirIdx uint64, dirPath string, dirOK bool, compDir string) string {
	if isAbsPath(name) {
		return name
	}
	incDir := ""
	if dirOK {
		incDir = dirPath
	}
	var p string
	if (version < 5 || dirIdx != 0) && compDir != "" && !isAbsPath(incDir) {
		p = compDir
	}
	if incDir != "" {
		p = appendPath(p, incDir)
	}
	return appendPath(p, name)
}
