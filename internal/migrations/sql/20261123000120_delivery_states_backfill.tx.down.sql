-- The states it filled in are kept: …100's down drops the table.
SELECT 1;
