SELECT 'a'
  'b' AS continued, "Quoted ""Name""", x.y