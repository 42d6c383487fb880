BupdatesJ
S«>Ì¼Ò¾®¸¿_¬«¿_Zî=