B
past_cacheJp>U@IÀ