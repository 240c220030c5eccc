package folded

import (
	"bufio"
	"io"
	"strconv"
)

// Write writes stacks to w in the folded format, one line per stack in
// the order given:
//
//	root;caller;leaf 1234
//
// Frame names go through [Sanitize]. Consecutive stacks that print the
// same frames (they differ only in what the format cannot show, such as
// whether a frame was inlined) are merged into one line with the sum of
// their values; [Stacks] returns such stacks next to each other. Lines
// whose value comes to zero, and stacks without frames, are left out.
func Write(w io.Writer, stacks []Stack) error {
	bw := bufio.NewWriter(w)
	var line, prev []byte // line: the frames of the current stack
	var sum int64
	var num []byte
	flush := func() {
		if len(prev) > 0 && sum != 0 {
			bw.Write(prev)
			bw.WriteByte(' ')
			num = strconv.AppendInt(num[:0], sum, 10)
			bw.Write(num)
			bw.WriteByte('\n')
		}
	}
	for _, s := range stacks {
		line = line[:0]
		for i, f := range s.Frames {
			if i > 0 {
				line = append(line, ';')
			}
			line = append(line, Sanitize(f.Name)...)
		}
		if len(prev) > 0 && string(line) == string(prev) {
			sum += s.Value
			continue
		}
		flush()
		prev, line = line, prev
		sum = s.Value
	}
	flush()
	return bw.Flush()
}
