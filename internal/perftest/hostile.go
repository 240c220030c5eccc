package perftest

import (
	"bytes"
	"fmt"

	"github.com/klauspost/compress/zstd"
)

// Hostile recordings: each is a good recording (GoodPID's samples in its
// anonymous memory at GoodAddr, which a perf map GoodMap names
// GoodFunc) with something hostile added, at a size given by a count.

// The good part of every hostile recording.
const (
	GoodPID  = 42
	GoodAddr = 0x7f0000001000
	GoodFunc = "hostile_perf_ok"
)

// GoodMap is the perf map (perf-42.map) naming the good part's code.
func GoodMap() []byte { return fmt.Appendf(nil, "%x 1000 %s\n", GoodAddr, GoodFunc) }

// good returns the good part: GoodPID's command, its anonymous memory
// and 16 samples there.
func good() [][]byte {
	recs := [][]byte{
		Comm(GoodPID, GoodPID, 1, "good", true),
		MMAP2(GoodPID, 2, GoodAddr, 0x1000, 0, "//anon"),
	}
	for i := range 16 {
		recs = append(recs, Sample(GoodPID, GoodPID, uint64(10+i), 1000000, GoodAddr+0x10))
	}
	return recs
}

// Good returns the good recording alone.
func Good() []byte {
	r := &Recording{}
	r.Add(good()...)
	return r.Bytes()
}

// CompressedBomb returns a recording whose COMPRESSED records, level 4
// Zstandard, decompress to n copies of rec after the good part.
func CompressedBomb(rec []byte, n int) []byte {
	var z bytes.Buffer
	enc, err := zstd.NewWriter(&z, zstd.WithEncoderLevel(zstd.SpeedBestCompression), zstd.WithEncoderConcurrency(1),
		zstd.WithWindowSize(1<<20))
	if err != nil {
		panic(err)
	}
	for _, g := range good() {
		enc.Write(g)
	}
	chunk := bytes.Repeat(rec, max(1, (1<<20)/len(rec)))
	per := len(chunk) / len(rec)
	for left := n; left > 0; left -= per {
		k := min(left, per)
		enc.Write(chunk[:k*len(rec)])
	}
	enc.Close()
	r := &Recording{Records: CompressedRecords(z.Bytes())}
	return r.Bytes()
}

// SideFlood returns a recording with n side records of kind "comm" (each
// of its own thread, of a process of at most 256 threads), "fork" (a
// chain of processes, each forked from the one before) or "mmap" (of
// one process, each at its own address).
func SideFlood(kind string, n int) []byte {
	r := &Recording{}
	r.Add(good()...)
	for i := range n {
		t := uint64(100 + i)
		switch kind {
		case "comm":
			r.Add(Comm(uint32(1000+i/256), uint32(1000+i), t, fmt.Sprintf("c%d", i%1024), false))
		case "fork":
			r.Add(Fork(uint32(1000+i), uint32(999+i), uint32(1000+i), uint32(999+i), t))
		case "mmap":
			r.Add(MMAP2(43, t, 0x10000000+uint64(i)*0x2000, 0x1000, 0, fmt.Sprintf("/lib/l%d.so", i%4096)))
		default:
			panic("unknown kind " + kind)
		}
	}
	return r.Bytes()
}

// DeepStacks returns a recording with n samples of process 43, each of
// a stack of depth distinct frames, no two samples sharing one.
func DeepStacks(n, depth int) []byte {
	r := &Recording{}
	r.Add(good()...)
	r.Add(MMAP2(43, 3, 0x10000000, 1<<40, 0, "//anon"))
	chain := make([]uint64, depth)
	for i := range n {
		for k := range chain {
			chain[k] = 0x10000000 + uint64(i*depth+k)*16
		}
		r.Add(Sample(43, 43, uint64(100+i), 1000000, chain...))
	}
	return r.Bytes()
}

// ProcessTree returns a recording of n processes, each forked from the
// one before and sampled once in the code it shares with its ancestors.
func ProcessTree(n int) []byte {
	r := &Recording{}
	r.Add(good()...)
	r.Add(Comm(1000, 1000, 3, "tree", true), MMAP2(1000, 3, 0x10000000, 0x1000, 0, "//anon"))
	for i := 1; i < n; i++ {
		pid := uint32(1000 + i)
		t := uint64(100 + 2*i)
		r.Add(Fork(pid, pid-1, pid, pid-1, t), Sample(pid, pid, t+1, 1000000, 0x10000010, 0x10000020))
	}
	return r.Bytes()
}

// AliasedIDs returns a recording of attrs events whose event id
// sections are all the same n ids.
func AliasedIDs(attrs, n int) []byte {
	b := Good()
	attrsOff, attrsN := le.Uint64(b[24:]), le.Uint64(b[32:])
	entry := bytes.Clone(b[attrsOff : attrsOff+attrsN])
	// The ids go at the end of the file, the attributes after them.
	idsOff := uint64(len(b))
	ids := make([]byte, 8*n)
	for i := range n {
		le.PutUint64(ids[8*i:], uint64(i+1))
	}
	b = append(b, ids...)
	newAttrs := uint64(len(b))
	for range attrs {
		e := bytes.Clone(entry)
		le.PutUint64(e[attrSize:], idsOff)
		le.PutUint64(e[attrSize+8:], uint64(len(ids)))
		b = append(b, e...)
	}
	le.PutUint64(b[24:], newAttrs)
	le.PutUint64(b[32:], uint64(attrs)*uint64(len(entry)))
	return b
}

// PerfMap returns a perf map of n distinct entries of size bytes, 16
// bytes apart (size 16: one range; less: n ranges).
func PerfMap(n int, size int) []byte {
	var b bytes.Buffer
	b.Write(GoodMap())
	for i := range n {
		fmt.Fprintf(&b, "%x %x f%d\n", 0x10000000+uint64(i)*16, size, i)
	}
	return b.Bytes()
}

// JITDump returns a jitdump of process pid with n CODE_LOAD records of
// 16 bytes of code each, one after the other, after one of GoodFunc at
// GoodAddr, as long as GoodMap's.
func JITDump(pid uint32, n int) []byte {
	var b []byte
	b = le.AppendUint32(b, 0x4A695444)
	b = le.AppendUint32(b, 1)
	b = le.AppendUint32(b, 40)
	b = le.AppendUint32(b, 62) // EM_X86_64
	b = le.AppendUint32(b, 0)
	b = le.AppendUint32(b, pid)
	b = le.AppendUint64(b, 1)
	b = le.AppendUint64(b, 0)
	load := func(i int, addr uint64, name string, code int) {
		size := 16 + 40 + len(name) + 1 + code
		b = le.AppendUint32(b, 0) // CODE_LOAD
		b = le.AppendUint32(b, uint32(size))
		b = le.AppendUint64(b, uint64(2+i))
		b = le.AppendUint32(b, pid)
		b = le.AppendUint32(b, pid)
		b = le.AppendUint64(b, addr)
		b = le.AppendUint64(b, addr)
		b = le.AppendUint64(b, uint64(code))
		b = le.AppendUint64(b, uint64(i))
		b = append(b, name...)
		b = append(b, 0)
		b = append(b, bytes.Repeat([]byte{0xc3}, code)...)
	}
	load(0, GoodAddr, GoodFunc, 0x1000)
	for i := 1; i <= n; i++ {
		load(i, 0x10000000+uint64(i)*16, fmt.Sprintf("f%d", i), 16)
	}
	return b
}
