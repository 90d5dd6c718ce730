"""Seeded fake data: the submission factory (``factory``), its cheap draws and Faker pools
(``draws``) and the check parts of a record (``checks``). Import the module you need; this
package imports nothing, so naming it costs no Faker start-up."""
