/* comment /* nested */ */ SELECT 1 -- trailing
;