Bgrad_updatesJ/¹
?/¹
?Ë‡¿/¹
?_ÜÚ?Ç‹…>Ç‹…>