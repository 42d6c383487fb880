B
past_cacheJdøéø¿>O@¿x¿@c¿