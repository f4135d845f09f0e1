SELECT trim(BOTH 'x' FROM 'xax'), substring('hello' FROM 2 FOR 3), position('l' IN 'hello'), concat('a', NULL, 1), concat_ws(',', 1, 2), split_part('a,b', ',', 2), lpad('x', 5, 'ab');
