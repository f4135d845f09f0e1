-- Nexmark q5 on Spark: hot items, the auctions with the most bids per
-- sliding window (10 seconds, every 2 seconds).  Spark refuses
-- nexmark-flink's one query (the counts per auction and window joined with
-- their maximum per window): the maximum, grouped by the first
-- aggregation's window start, is "[UNSUPPORTED_STREAMING_OPERATOR_WITHOUT_WATERMARK]
-- Append output mode not supported for aggregations on streaming
-- DataFrames/DataSets without watermark" (a column taken from the window
-- struct carries no event time), and a join needs append mode.  So it runs
-- as sluice's pipeline does (tools/nexmark/queries/q5.sql), three streaming
-- queries through Parquet folders (spark_nexmark.py):
--   q5_count  bids per auction and window, append (emitted when the
--             watermark passes the window's end);
--   q5_max    the maximum per window, update mode: all of a window's counts
--             come in one q5_count batch, so its row is the final maximum;
--   q5        q5_count JOIN q5_max on the window and num >= maxn (a
--             stream-stream inner join, append).
-- stage: q5_count append watermark starttime '0 seconds'
SELECT auction, count(*) AS num, window.start AS starttime, window.end AS endtime
  FROM bid
 GROUP BY window(date_time, '10 seconds', '2 seconds'), auction;
-- stage: q5_max update watermark starttime '0 seconds'
SELECT max(num) AS maxn, starttime, endtime
  FROM q5_count
 GROUP BY starttime, endtime;
-- stage: q5 append
SELECT a.auction, a.num, a.starttime, a.endtime
  FROM q5_count AS a JOIN q5_max AS m
    ON a.starttime = m.starttime AND a.endtime = m.endtime AND a.num >= m.maxn
