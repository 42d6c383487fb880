Bgrad_updatesJ0Á¼á/bÆ¿yõ£t/½õ¿ğ²KCşÕ…¿eTá~êí¿ããŒÒ[Á?
©|³fÛ?