-- The tokenizer (and chat template) that counted each run's ISL and OSL, as
-- the run's client audit names it ("o200k_base (built-in tiktoken
-- encoding)"); empty for runs stored before it was kept.
ALTER TABLE runs ADD COLUMN tokens_counted_with TEXT NOT NULL DEFAULT '';
