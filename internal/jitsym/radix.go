package jitsym

// minRadix is the shortest slice radixSort sorts by digits; shorter ones
// take an insertion sort, quick on the short runs mostly in order that
// the index build sorts.
const minRadix = 256

// radixSort sorts s stably by key, with buf, at least as long as s, as
// scratch space: a least-significant-digit radix sort on bytes that skips
// the bytes all keys share (the high bytes of addresses, mostly). On the
// large arrays the index build sorts — spans, symbols, range endpoints,
// hundreds of thousands of them — it takes a fraction of the time of a
// comparison sort.
func radixSort[T any](s, buf []T, key func(*T) uint64) {
	if len(s) < minRadix {
		for i := 1; i < len(s); i++ {
			for j := i; j > 0 && key(&s[j]) < key(&s[j-1]); j-- {
				s[j], s[j-1] = s[j-1], s[j]
			}
		}
		return
	}
	and, or := ^uint64(0), uint64(0)
	for i := range s {
		k := key(&s[i])
		and &= k
		or |= k
	}
	differ := and ^ or // the bits not all keys share
	src, dst := s, buf[:len(s)]
	for shift := 0; shift < 64; shift += 8 {
		if differ>>shift&0xff == 0 {
			continue
		}
		var start [256]int
		for i := range src {
			start[key(&src[i])>>shift&0xff]++
		}
		pos := 0
		for d, n := range start {
			start[d] = pos
			pos += n
		}
		for i := range src {
			d := key(&src[i]) >> shift & 0xff
			dst[start[d]] = src[i]
			start[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &s[0] {
		copy(s, src)
	}
}
