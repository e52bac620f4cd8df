-- A remembered turn (source_type 'turn') is searched by what was said, not by who said it. Its
-- heading (gateway.usecases.sessions._turn_heading) is "<role>, turn <seq>: <opening words>";
-- indexed whole, the role put "user" or "assistant" into every turn of a session, so a step
-- query naming either (a pinned task such as "answer the user's questions") matched every turn
-- of the session, and the lexical recall scored the whole namespace at every step. The opening
-- words stay: a turn's search text is its heading without that prefix, then its content, as any
-- other memory's is its heading and content. The rewrite recomputes every row's tsvector, and
-- so also lays every row out as 0026 says.
ALTER TABLE memories ALTER COLUMN tsv SET EXPRESSION AS (
    to_tsvector(
        'english'::regconfig,
        CASE
            WHEN source_type = 'turn' THEN regexp_replace(heading, '^[a-z]+, turn [0-9]+: ', '')
            ELSE heading
        END || ' ' || content
    )
);
