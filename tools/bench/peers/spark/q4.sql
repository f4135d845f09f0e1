-- Nexmark q4 on Spark: average price per category of the winning bids.
-- Spark refuses it as one streaming query: in update mode (the average per
-- category changes as auctions close) "Join between two streaming
-- DataFrames/Datasets is not supported in Update output mode, only in
-- Append output mode"; in append mode the average per category, grouped
-- by no event time, is "[UNSUPPORTED_STREAMING_OPERATOR_WITHOUT_WATERMARK]
-- Append output mode not supported for aggregations on streaming
-- DataFrames/DataSets without watermark".  So it runs as sluice's pipeline
-- does (tools/nexmark/queries/q4.sql), two streaming queries through a
-- Parquet folder (spark_nexmark.py):
--   q4_winning  auction JOIN bid on nexmark-flink's condition and sluice's
--               one-minute bound (a stream-stream join with a time bound),
--               the highest price per auction in a session window of 61
--               seconds on the bid time ("the auction is over"), append;
--   q4          the average per category, update mode.
-- stage: q4_winning append
SELECT a.id, a.category, max(b.price) AS final
  FROM auction AS a JOIN bid AS b
    ON a.id = b.auction
   AND b.date_time BETWEEN a.date_time AND a.date_time + INTERVAL 1 MINUTE
   AND b.date_time <= a.expires
 GROUP BY session_window(b.date_time, '61 seconds'), a.id, a.category;
-- stage: q4 update
SELECT category, avg(final) AS avg_final
  FROM q4_winning
 GROUP BY category
