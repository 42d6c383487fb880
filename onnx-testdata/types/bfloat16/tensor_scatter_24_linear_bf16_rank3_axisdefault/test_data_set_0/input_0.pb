B
past_cacheJ~@w@Þ?>@Ò¿F@¿}@L@<@