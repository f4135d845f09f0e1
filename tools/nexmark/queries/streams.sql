-- The three Nexmark streams, generated in-process by the nexmark connector.
-- number_of_events counts all events (persons, auctions and bids, 1:3:46);
-- events_per_second = 0 makes them all available at once (a benchmark);
-- leave it out for event-time pace (first_event_rate, 10,000/s).
CREATE STREAM person (id bigint, name text, email_address text, credit_card text,
    city text, state text, date_time timestamp, extra text,
    WATERMARK FOR date_time AS date_time - INTERVAL '4 seconds')
  WITH (connector = 'nexmark', table = 'person', seed = 1,
        number_of_events = 10000000, events_per_second = 0);
CREATE STREAM auction (id bigint, item_name text, description text, initial_bid bigint,
    reserve bigint, date_time timestamp, expires timestamp, seller bigint,
    category bigint, extra text,
    WATERMARK FOR date_time AS date_time - INTERVAL '4 seconds')
  WITH (connector = 'nexmark', table = 'auction', seed = 1,
        number_of_events = 10000000, events_per_second = 0);
CREATE STREAM bid (auction bigint, bidder bigint, price bigint, channel text, url text,
    date_time timestamp, extra text,
    WATERMARK FOR date_time AS date_time - INTERVAL '4 seconds')
  WITH (connector = 'nexmark', table = 'bid', seed = 1,
        number_of_events = 10000000, events_per_second = 0);
