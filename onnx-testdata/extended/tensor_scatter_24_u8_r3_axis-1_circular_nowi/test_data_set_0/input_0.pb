B
past_cacheJ	