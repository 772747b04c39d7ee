window.one = 1;
