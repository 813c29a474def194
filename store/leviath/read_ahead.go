package leviath

import "os"

// aheadBytes is the read from which readFrames splits the work in two.
// Reading and cutting a frame (skeleton: a scan for the ends of its long
// strings and their fingerprints) is about two thirds of a fold's time,
// decoding and folding what is left the rest; on two cores a 1 GB journal
// is folded in the time of the larger part.
var aheadBytes int64 = 16 << 20

// frameBatch is frames read ahead: their offsets and payloads, end to end
// in buf.
type frameBatch struct {
	offs []int64
	ends []int
	buf  []byte
}

// batchBytes is how many payload bytes a batch gathers before it is handed
// over (a few batches are in flight: memory stays a few MB).
const batchBytes = 1 << 20

// readFramesAhead is readFrames with the reading and cutting in a goroutine
// of its own, the folding (fn) in the caller's: the same frames, offsets
// and outcome. When fn stops at a frame, the goroutine is stopped and
// waited for; n then counts the bytes it had read ahead too.
func readFramesAhead(f *os.File, off, size int64, h *foldHash, fn frameFn) (next int64, st tailState, n int64, err error) {
	type result struct {
		next int64
		st   tailState
		n    int64
		err  error
	}
	batches := make(chan *frameBatch, 3)
	free := make(chan *frameBatch, 4)
	stop := make(chan struct{})
	res := make(chan result, 1)
	go func() {
		b := &frameBatch{}
		send := func() bool {
			select {
			case batches <- b:
			case <-stop:
				return false
			}
			select {
			case b = <-free:
				b.offs, b.ends, b.buf = b.offs[:0], b.ends[:0], b.buf[:0]
			default:
				b = &frameBatch{}
			}
			return true
		}
		r := result{}
		r.next, r.st, r.n, r.err = scanFrames(f, off, size, h, func(o int64, p []byte) bool {
			if len(p) > 4<<20 {
				// A skeleton this big is a buffer scanFrames drops after
				// this call (it keeps none over 4 MB): handed over as it
				// is, alone, rather than copied.
				if len(b.offs) > 0 && !send() {
					return false
				}
				b.offs, b.ends, b.buf = append(b.offs, o), append(b.ends, len(p)), p
				return send()
			}
			b.offs = append(b.offs, o)
			b.buf = append(b.buf, p...) // scanFrames reuses p's buffer for the next frame
			b.ends = append(b.ends, len(b.buf))
			if len(b.buf) >= batchBytes {
				return send()
			}
			return true
		})
		select {
		case <-stop:
		default:
			if len(b.offs) > 0 {
				send()
			}
		}
		close(batches)
		res <- r
	}()
	for b := range batches {
		start := 0
		for i, o := range b.offs {
			if !fn(o, b.buf[start:b.ends[i]]) {
				close(stop)
				for range batches {
				}
				r := <-res
				return o, tailBad, r.n, nil
			}
			start = b.ends[i]
		}
		if len(b.buf) <= 4*batchBytes {
			select {
			case free <- b:
			default:
			}
		}
	}
	r := <-res
	return r.next, r.st, r.n, r.err
}
