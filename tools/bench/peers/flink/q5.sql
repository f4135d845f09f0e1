-- Nexmark q5 on Flink SQL: hot items, nexmark-flink's q5 as it is: the bids
-- per auction per hopping window (AuctionBids), the maximum count per window
-- (MaxBids, a regular aggregate, so updating), joined on the window and
-- num >= maxn.  The join's input from MaxBids updates, so its result is a
-- changelog: the runner collects it (the SELECT below) and applies the
-- changes; the final rows are the auctions with the most bids per window.
SELECT AuctionBids.auction, AuctionBids.num
  FROM (
    SELECT auction, count(*) AS num, window_start AS starttime, window_end AS endtime
      FROM TABLE(HOP(TABLE bid, DESCRIPTOR(date_time), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
     GROUP BY auction, window_start, window_end
  ) AS AuctionBids
  JOIN (
    SELECT max(CountBids.num) AS maxn, CountBids.starttime, CountBids.endtime
      FROM (
        SELECT count(*) AS num, window_start AS starttime, window_end AS endtime
          FROM TABLE(HOP(TABLE bid, DESCRIPTOR(date_time), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
         GROUP BY auction, window_start, window_end
      ) AS CountBids
     GROUP BY CountBids.starttime, CountBids.endtime
  ) AS MaxBids
  ON AuctionBids.starttime = MaxBids.starttime AND
     AuctionBids.endtime = MaxBids.endtime AND
     AuctionBids.num >= MaxBids.maxn;
