BupdatesJ$=²>BÈ>ÊE
?P@·ßÏ¿ tB¿®_ÿ>]u‡¿Njs?