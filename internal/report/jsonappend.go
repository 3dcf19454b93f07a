package report

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// Appenders that write what encoding/json writes (HTML escaping off) for
// the values of a JSONL line, without its reflection: a million-line
// export is written in a second, not in several.

// appendFloat appends f as encoding/json does: shortest representation,
// exponent form outside [1e-6, 1e21). f must be finite.
func appendFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' { // e-09 → e-9, as encoding/json
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// appendString appends s as a JSON string: quotes, backslashes and
// control characters escaped, invalid UTF-8 as U+FFFD, U+2028 and U+2029
// escaped, as encoding/json.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			switch r {
			case utf8.RuneError:
				b = append(b, `\ufffd`...)
			default:
				b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			}
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendMetadata appends md as encoding/json would marshal it: an unset
// optional time is left out, as AIPerf leaves out its None fields.
func appendMetadata(b []byte, md *jsonlMetadata) []byte {
	num := func(b []byte, key string, v int64) []byte {
		b = append(b, key...)
		return strconv.AppendInt(b, v, 10)
	}
	ptr := func(b []byte, key string, v *int64) []byte {
		if v == nil {
			return b
		}
		return num(b, key, *v)
	}
	str := func(b []byte, key, v string) []byte { return appendString(append(b, key...), v) }
	b = num(b, `{"request_num":`, int64(md.RequestNum))
	b = num(b, `,"session_num":`, int64(md.SessionNum))
	b = str(b, `,"x_request_id":`, md.XRequestID)
	b = str(b, `,"x_correlation_id":`, md.XCorrelationID)
	b = str(b, `,"conversation_id":`, md.ConversationID)
	b = num(b, `,"turn_index":`, int64(md.TurnIndex))
	b = ptr(b, `,"credit_issued_ns":`, md.CreditIssuedNs)
	b = ptr(b, `,"credit_received_ns":`, md.CreditReceivedNs)
	b = num(b, `,"request_start_ns":`, md.RequestStartNs)
	b = ptr(b, `,"request_ack_ns":`, md.RequestAckNs)
	b = num(b, `,"request_end_ns":`, md.RequestEndNs)
	b = str(b, `,"worker_id":`, md.WorkerID)
	b = str(b, `,"record_processor_id":`, md.RecordProcessorID)
	b = str(b, `,"benchmark_phase":`, md.BenchmarkPhase)
	b = strconv.AppendBool(append(b, `,"was_cancelled":`...), md.WasCancelled)
	b = ptr(b, `,"cancellation_time_ns":`, md.CancellationTimeNs)
	b = num(b, `,"clock_offset_ns":`, md.ClockOffsetNs)
	b = ptr(b, `,"agent_depth":`, intPtr(md.AgentDepth))
	if md.ParentCorrelationID != "" {
		b = str(b, `,"parent_correlation_id":`, md.ParentCorrelationID)
	}
	b = str(b, `,"phase":`, md.Phase)
	b = num(b, `,"scheduled_ns":`, md.ScheduledNs)
	b = num(b, `,"send_lag_ns":`, md.SendLagNs)
	if md.HTTPStatus != 0 {
		b = num(b, `,"http_status":`, int64(md.HTTPStatus))
	}
	b = strconv.AppendBool(append(b, `,"retried":`...), md.Retried)
	b = num(b, `,"malformed_chunks":`, int64(md.MalformedChunks))
	if md.UsageUntrusted != "" {
		b = str(b, `,"usage_untrusted":`, md.UsageUntrusted)
	}
	if md.UsageCacheDropped != "" {
		b = str(b, `,"usage_cache_dropped":`, md.UsageCacheDropped)
	}
	return append(b, '}')
}

// intPtr widens an optional int for appendMetadata's ptr.
func intPtr(v *int) *int64 {
	if v == nil {
		return nil
	}
	n := int64(*v)
	return &n
}
