// Command goarm is built with GOARCH=arm64 by TestObjdumpAgreement: the Go
// toolchain's AArch64 code (runtime, crypto, sort, fmt) is a large corpus
// of real instructions, LSE atomics and crypto extensions included.
package main

import (
	"crypto/sha256"
	"crypto/sha512"
	"fmt"
	"math"
	"sort"
	"sync/atomic"
)

func main() {
	x := []float64{3, 1, 2}
	sort.Float64s(x)
	var n atomic.Int64
	n.Add(int64(len(x)))
	fmt.Println(sha256.Sum256([]byte("a")), sha512.Sum512([]byte("b")), math.Sqrt(x[0]), n.Load())
}
