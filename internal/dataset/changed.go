package dataset

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"time"
)

// ErrInputChanged is the error of a conversation read back from an input
// file that is no longer what was read when it was opened: what would be
// built from it now was not what the run was checked against, nor
// (during the run) what was sent. errors.Is finds it.
var ErrInputChanged = errors.New("the input file changed during the run")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// rowSum is the checksum a row's text is remembered by: CRC-32C, which
// runs at memory speed, 4 bytes a row.
func rowSum(line []byte) uint32 { return crc32.Checksum(line, castagnoli) }

// fileStamp is an open file's size and modification time.
type fileStamp struct {
	size int64
	mod  time.Time
	ok   bool
}

// stampOf is f's stamp now (not ok when it cannot be had).
func stampOf(f *os.File) fileStamp {
	st, err := f.Stat()
	if err != nil {
		return fileStamp{}
	}
	return fileStamp{size: st.Size(), mod: st.ModTime(), ok: true}
}

// unchanged checks that d's file has the size and modification time it
// had when it was opened (one fstat).
func (d *fileDataset) unchanged() error {
	now := stampOf(d.f)
	switch {
	case !d.stamp.ok || !now.ok:
		return nil
	case now.size != d.stamp.size:
		return d.changed("it was %d bytes when it was opened and is %d bytes now", d.stamp.size, now.size)
	case !now.mod.Equal(d.stamp.mod):
		return d.changed("it was modified at %s, after it was opened", now.mod.Format(time.RFC3339Nano))
	}
	return nil
}

// checkRow checks that row r, read back as line (err: the read's error),
// is what was read when the file was indexed.
func (d *fileDataset) checkRow(r uint32, line []byte, err error) error {
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return d.changed("it ends before its row at byte %d", d.off[r])
	case err != nil:
		return fmt.Errorf("re-read %s at byte %d: %w", d.path, d.off[r], err)
	case d.sum != nil && rowSum(line) != d.sum[r]:
		return d.changed("its row at byte %d is not what was read when it was opened", d.off[r])
	}
	return nil
}

// changed is ErrInputChanged for d's file, saying how.
func (d *fileDataset) changed(format string, args ...any) error {
	return fmt.Errorf("re-read %s: %w: %s (a file must not change while it is replayed: nothing is built from it)",
		d.path, ErrInputChanged, fmt.Sprintf(format, args...))
}
