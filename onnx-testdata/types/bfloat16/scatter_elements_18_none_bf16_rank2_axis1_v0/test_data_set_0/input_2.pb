BupdatesJ@4¿fÀa@iÀ`>"ÀA@
@š¿