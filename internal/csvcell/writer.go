package csvcell

import (
	"encoding/csv"
	"io"
)

// Writer is a csv.Writer whose every cell is written as Text: an export
// that mixes its own numbers with text from a server, a file or a config
// cannot forget a cell. Set UseCRLF and Comma on the embedded writer.
type Writer struct {
	*csv.Writer
	row []string // Write's buffer, reused
}

// NewWriter returns a Writer writing to w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{Writer: csv.NewWriter(w)}
}

// Write writes one record, each cell as Text.
func (w *Writer) Write(record []string) error {
	w.row = w.row[:0]
	for _, c := range record {
		w.row = append(w.row, Text(c))
	}
	return w.Writer.Write(w.row)
}

// WriteAll writes records, each cell as Text, and flushes.
func (w *Writer) WriteAll(records [][]string) error {
	for _, r := range records {
		if err := w.Write(r); err != nil {
			return err
		}
	}
	w.Flush()
	return w.Error()
}
