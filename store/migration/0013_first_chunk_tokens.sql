-- Under --per-chunk-usage, each record's first content chunk's token count
-- (the server's completion_tokens on the first response that carried both
-- generated text and usage: metrics.Usage.FirstChunkTokens), which its
-- inter_token_latency divides by OSL minus, so that figures drawn from
-- stored records (aiperf plot) show the run's own ITL. NULL without one:
-- a run without the flag, a count that was missing or in untrusted usage,
-- and every record stored before it was kept; their ITL divides by OSL - 1.
ALTER TABLE records ADD COLUMN first_chunk_tokens INTEGER;
