-- The three Nexmark streams for Flink SQL: the Kafka topics person, auction
-- and bid, each read from its earliest offsets to the latest offsets at
-- start (a bounded scan: the job ends when it has read them, as Spark's
-- availableNow and sluice's available_now), JSON values with the columns of
-- tools/nexmark/queries/streams.sql and their 4-second watermarks.  A query
-- reads only the tables it names.  ${kafka:TOPIC} is the Kafka connector's
-- options for TOPIC (flink_nexmark.py, kafka_options): 'scan.startup.mode'
-- earliest-offset, 'scan.bounded.mode' latest-offset, 'format' json with
-- 'json.timestamp-format.standard' SQL.
CREATE TABLE person (
    id BIGINT,
    name STRING,
    email_address STRING,
    credit_card STRING,
    city STRING,
    state STRING,
    date_time TIMESTAMP(3),
    extra STRING,
    WATERMARK FOR date_time AS date_time - INTERVAL '4' SECOND
) WITH (${kafka:person});
CREATE TABLE auction (
    id BIGINT,
    item_name STRING,
    description STRING,
    initial_bid BIGINT,
    reserve BIGINT,
    date_time TIMESTAMP(3),
    expires TIMESTAMP(3),
    seller BIGINT,
    category BIGINT,
    extra STRING,
    WATERMARK FOR date_time AS date_time - INTERVAL '4' SECOND
) WITH (${kafka:auction});
CREATE TABLE bid (
    auction BIGINT,
    bidder BIGINT,
    price BIGINT,
    channel STRING,
    url STRING,
    date_time TIMESTAMP(3),
    extra STRING,
    WATERMARK FOR date_time AS date_time - INTERVAL '4' SECOND
) WITH (${kafka:bid});
