package claudecode

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"sync"
)

// readers are readLines' buffers: a live session is read on for every
// line appended, and a buffer each time was most of what a line cost the
// collector.
var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 256<<10) }}

// readLines hands fn each complete line of path from byte off on and
// returns the offset after the last newline: a last line without its
// newline is a write in progress, left for the next read.
func readLines(path string, off int64, fn func([]byte)) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return off, err
	}
	defer f.Close()
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return off, err
	}
	r := readers.Get().(*bufio.Reader)
	r.Reset(f)
	defer func() { r.Reset(nil); readers.Put(r) }()
	var long []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long, chunk...)
			continue
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return off, nil
			}
			return off, err
		}
		line := chunk
		if long != nil {
			line = append(long, chunk...)
			long = nil
		}
		off += int64(len(line))
		fn(bytes.TrimSuffix(line, []byte("\n")))
	}
}

// headTail reads up to n bytes at each end of path: a transcript's first
// prompt is near its start, its state near its end.
func headTail(path string, n int64) (head, tail []byte, size int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, 0, err
	}
	size = fi.Size()
	head = make([]byte, min(n, size))
	if _, err := io.ReadFull(f, head); err != nil {
		return nil, nil, size, err
	}
	if size <= n {
		return head, head, size, nil
	}
	tail = make([]byte, n)
	if _, err := f.ReadAt(tail, size-n); err != nil {
		return nil, nil, size, err
	}
	if i := bytes.IndexByte(tail, '\n'); i >= 0 {
		tail = tail[i+1:] // the first line is cut
	}
	return head, tail, size, nil
}

// completeLines splits b into its newline-terminated lines.
func completeLines(b []byte) [][]byte {
	var out [][]byte
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return out
		}
		out = append(out, b[:i])
		b = b[i+1:]
	}
}
