-- The bid stream for Flink SQL: the Kafka topic ${topic} read from its
-- earliest offsets to the latest offsets at start (a bounded scan: the job
-- ends when it has read them, as Spark's availableNow and sluice's
-- available_now), JSON values with the columns of
-- tools/nexmark/queries/streams.sql and its 4-second watermark.
CREATE TABLE bid (
    auction BIGINT,
    bidder BIGINT,
    price BIGINT,
    channel STRING,
    url STRING,
    date_time TIMESTAMP(3),
    extra STRING,
    WATERMARK FOR date_time AS date_time - INTERVAL '4' SECOND
) WITH (
    'connector' = 'kafka',
    'topic' = '${topic}',
    'properties.bootstrap.servers' = '${bootstrap}',
    'properties.group.id' = 'flink-nexmark',
    'scan.startup.mode' = 'earliest-offset',
    'scan.bounded.mode' = 'latest-offset',
    'format' = 'json',
    'json.timestamp-format.standard' = 'SQL'
);
