BupdatesJ
à=À€>,?&À