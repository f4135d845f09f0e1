-- Nexmark q2 on Spark: selection.
SELECT auction, price FROM bid WHERE auction % 123 = 0
