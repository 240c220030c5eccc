package regfile

import (
	"os"
	"path/filepath"
)

// An ID identifies a file: two open files have the same ID if they are
// the same file on the same device, whatever names they were opened by
// (links, "..", /proc/self/root/...). Where the system gives no inode
// numbers, it is the file's name, cleaned. IDs are comparable, for maps.
type ID struct {
	dev, ino uint64
	name     string
}

// nameID is the ID of f by its name.
func nameID(f *os.File) ID { return ID{name: filepath.Clean(f.Name())} }
