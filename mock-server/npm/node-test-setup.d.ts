// A module run for its effect: `node --import mediagen-mock/node-test-setup --test`.
export {};
