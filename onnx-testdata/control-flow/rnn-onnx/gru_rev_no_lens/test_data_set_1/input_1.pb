B	initial_hJ8$_>õ?t·‚½l5
¿